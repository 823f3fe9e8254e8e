// Hand-written kernels that follow the KernelSource contract (jit/kernel_source.h), for the
// device tests until the emitter produces them: the same text compiles with NVRTC and with
// the host backend.
#ifndef WARPTRACE_TESTS_JIT_TEST_KERNELS_H_
#define WARPTRACE_TESTS_JIT_TEST_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jit/kernel_source.h"

namespace warptrace::testing {

// `block_stats`: one block of 64 threads per 64 inputs; traced per warp (2 units per block).
//   params: const int* in, int* block_sums, int* warp_sums, int* total, int* maximum,
//           unsigned int* warptrace_trace
// Computes block_sums[b] (shared-memory tree reduction with __syncthreads), warp_sums[2b+w]
// (__shfl_down_sync), total (atomicAdd), maximum (atomicMax), and checks __shfl_xor_sync
// against __shfl_down_sync (a mismatch adds 1000000 to warp_sums). Every unit records, in
// order: kernel enter (site 0), barrier wait enter/exit (site 2), two loop iterations
// enter/exit (site 1), kernel exit: kBlockStatsEvents events. With `shared`, events are
// staged in dynamic shared memory (dynamic_shared_bytes set accordingly).
inline constexpr uint32_t kBlockStatsThreads = 64;
inline constexpr uint32_t kBlockStatsEvents = 8;
KernelSource BlockStatsKernel(uint32_t num_blocks, uint32_t capacity, bool shared);
// The tag sequence every unit of block_stats records.
std::vector<uint32_t> BlockStatsTags();

// An unprofiled kernel with the given body, params "int* out"; host entry included.
KernelSource SimpleKernel(const std::string& name, const std::string& body,
                          const std::string& prelude = "");

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_TEST_KERNELS_H_
