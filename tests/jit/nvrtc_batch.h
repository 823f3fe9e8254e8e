// Test-only: compiles many emitted kernels with NVRTC as few programs, for the suites that
// check that every variant of every kernel compiles with an empty log.
//
// Why: NVRTC costs ~20-30 ms of CPU per program before it compiles any kernel code (an empty
// kernel for sm_90), a third of a small kernel's whole compile. BM_BatchedVariants in
// tests/jit/compile/compile_benchmark.cc measures it (8 profiled variants, sm_90, CPU time): tiled
// GEMM 567 ms as eight programs -> 310 ms as one, reduction 544 -> 315, warp-specialized
// pipeline 1671 -> 1454.
//
// How: members whose sources have the same #include lines and the same in-memory headers
// share a program: those #include lines first, then each member's source verbatim in a
// namespace of its own (warptrace_batch<i>), its kernel renamed <kernel_name>_batch<i>
// (extern "C" names must differ). The #include lines inside the namespaces are then no-ops
// (the embedded headers have include guards), so each member sees what it sees alone (and
// the other members' namespaces), and no member sees a header it does not include itself. A
// member whose source and headers are byte-identical to an earlier member's is compiled
// once: it gets that member's result under its own label. A member with anything but
// comments before one of its #include lines (a macro a header could read, say) is compiled
// alone, since moving its #include lines first could change what it means.
//
// When a program fails or logs anything, each of its members is compiled again alone, so a
// failure names the member and carries its own log. When every member compiles alone with an
// empty log although their program did not, each gets the program's log in `batch_log`: the
// batching itself broke something, which a test should report as a failure too.
//
//   std::vector<NvrtcBatchMember> members = {
//       {"Gemm_warp_global_sm_90", source.source, source.kernel_name, source.headers}, ...};
//   ASSIGN_OR_RETURN(std::vector<NvrtcBatchResult> results,
//                    CompileNvrtcBatches(members, "sm_90"));
//   for (const NvrtcBatchResult& r : results) { EXPECT_THAT(r.status, IsOk()) << r.label; }
#ifndef WARPTRACE_TESTS_JIT_NVRTC_BATCH_H_
#define WARPTRACE_TESTS_JIT_NVRTC_BATCH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/embedded_headers.h"

namespace warptrace::testing {

struct NvrtcBatchMember {
  std::string label;        // names the member in results: "Pipeline_warp_shared_sm_80"
  std::string source;       // a complete translation unit (jit/builder/kernel_source.h conventions)
  std::string kernel_name;  // its `__global__ void <kernel_name>(` kernel
  std::vector<EmbeddedFile> headers;  // the in-memory headers it may #include
};

struct NvrtcBatchResult {
  std::string label;
  // The member's kernel as it is named in `ptx` and `cubin`: <kernel_name>_batch<i> when its
  // program compiled cleanly, <kernel_name> when it was compiled alone.
  std::string entry;
  // NvrtcCompiler's status for the member's compile: on failure the message quotes the
  // offending lines and carries NVRTC's log.
  absl::Status status;
  std::string log;  // the compile's log on success ("" when clean)
  // The PTX of `entry` alone: the module's .version, .target and .address_size lines and the
  // entry function's text (so a check on it never sees another member's code).
  std::string ptx;
  std::string cubin;  // the cubin of the member's program (holding `entry`, maybe others)
  // Non-empty when the member's program failed or logged something but each of its members
  // alone compiled with an empty log: the program's log (or error).
  std::string batch_log;
};

// Compiles `members` (one NVRTC program per distinct set of #include lines and headers) with
// NvrtcCompiler for `arch` ("sm_90": PTX and a cubin): -arch=<arch> -std=c++17, then
// `extra_flags` (e.g. "-lineinfo", "-I/usr/local/cuda/include"), and nothing else. One
// result per member, in order. Errors: InvalidArgument when a member's source has no
// `__global__ void <kernel_name>(`. A compile failure is the member's `status`, not an error
// of the call.
absl::StatusOr<std::vector<NvrtcBatchResult>> CompileNvrtcBatches(
    const std::vector<NvrtcBatchMember>& members, const std::string& arch,
    const std::vector<std::string>& extra_flags = {});

// The PTX of entry function `entry` in module `ptx`: the module's .version, .target and
// .address_size lines, then `.visible .entry <entry>(` through its closing brace. Empty when
// `ptx` has no such entry.
std::string PtxOfEntry(const std::string& ptx, const std::string& entry);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_NVRTC_BATCH_H_
