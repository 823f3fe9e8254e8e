// What the compile benchmarks (tests/jit:compile_benchmark, tests/jit/host:
// host_compile_benchmark) compile, by the index a benchmark takes as its argument.
#ifndef WARPTRACE_TESTS_JIT_BENCHMARK_KERNELS_H_
#define WARPTRACE_TESTS_JIT_BENCHMARK_KERNELS_H_

#include <string>

#include "jit/builder/kernel.h"

namespace warptrace::testing {

// 0: the tiled GEMM (256^3, 16x16 tiles), 1: the warp-specialized pipeline (64x128x512,
// 3 stages, 2 consumers), else the reduction (2^20 values, 64 blocks of 256 threads).
Kernel BenchmarkKernel(int index);

// A benchmark of a failing step would measure nothing: prints "<benchmark>: <what>" and
// aborts.
[[noreturn]] void BenchmarkDie(const char* benchmark, const std::string& what);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_BENCHMARK_KERNELS_H_
