// A stand-in for the CUDA driver API's cuda.h that fails to compile. no_cuda_h_test puts
// this directory first on the include path, so a header outside jit/cuda that brings in
// cuda.h (directly or through another header) stops the test's build here.
#error "cuda.h reached from a header outside jit/cuda: only jit/cuda .cc files (and its private headers cuda_driver.h, cuda_status.h) may include it; see the include chain above"
