// The adapter from NVRTC (CUDA's runtime compiler library) results to absl::Status, shared by
// jit/'s NvrtcCompiler and profiler/cli' recorder-cost measurement (profiler/ cannot see
// jit/, so the adapter lives beside both).
//
//   RETURN_IF_ERROR(ToStatus(nvrtcCompileProgram(...), "compiling gemm for sm_90", log));
//   // InvalidArgument: "NVRTC error: compiling gemm for sm_90: NVRTC_ERROR_COMPILATION
//   //                   NVRTC log:\n<the program log>"
//
// Codes: InvalidArgument for what the caller can fix (NVRTC_ERROR_COMPILATION,
// _INVALID_OPTION, _INVALID_INPUT, _NAME_EXPRESSION_NOT_VALID); ResourceExhausted for
// NVRTC_ERROR_OUT_OF_MEMORY; Internal for every other failure. Thread-safe.
#ifndef WARPTRACE_JIT_COMPILE_NVRTC_STATUS_H_
#define WARPTRACE_JIT_COMPILE_NVRTC_STATUS_H_

#include <nvrtc.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// OK for NVRTC_SUCCESS; else "NVRTC error: <context>: <NVRTC's name for result>", followed by
// "\nNVRTC log:\n<log>" when `log` is not empty.
absl::Status ToStatus(nvrtcResult result, absl::string_view context,
                      absl::string_view log = {});

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_NVRTC_STATUS_H_
