// Hand-written kernels that follow the KernelSource contract (jit/builder/kernel_source.h), for the
// device tests until the emitter produces them: the same text compiles with NVRTC and with
// the host backend.
#ifndef WARPTRACE_TESTS_JIT_TEST_KERNELS_H_
#define WARPTRACE_TESTS_JIT_TEST_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/builder/kernel_source.h"
#include "jit/platform/device.h"

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

struct BlockStatsRun {
  std::vector<int> in, block_sums, warp_sums;
  int total = 0, maximum = 0;
  std::vector<uint32_t> trace;  // the raw trace buffer
};

// Loads and runs block_stats on `device` with inputs in[i] = (i * 37) % 101 - 50 and a
// zero-filled trace buffer, and copies everything back.
absl::StatusOr<BlockStatsRun> RunBlockStats(Device& device, uint32_t num_blocks,
                                            uint32_t capacity, bool shared);
// GoogleTest checks: the outputs equal a CPU reference.
void ExpectBlockStatsOutputs(const BlockStatsRun& run, uint32_t num_blocks);
// GoogleTest checks of every raw record: identity words, checksum, attempted ==
// kBlockStatsEvents, min(attempted, capacity) events with BlockStatsTags() in clock order,
// untouched slots past them. sm_id < num_sms; `host`: a 1.5 GHz clock.
void ExpectBlockStatsRecords(const BlockStatsRun& run, uint32_t num_blocks, uint32_t capacity,
                             bool shared, uint32_t num_sms, bool host);

// An unprofiled kernel with the given body, params "int* out"; host entry included.
KernelSource SimpleKernel(const std::string& name, const std::string& body,
                          const std::string& prelude = "");

// Loads `kernel` (a SimpleKernel) on `device`, launches it over `grid` x `block` with
// `dynamic_shared` bytes and a zero-filled `out` of `out_ints` ints, synchronizes, and copies
// `out` back into `*out` (also when the launch failed, so a test can look at what ran).
// Returns the first failure: loading, allocating, launching, synchronizing or copying.
absl::Status RunSimpleKernel(Device& device, const KernelSource& kernel, Dim3 grid, Dim3 block,
                             size_t out_ints, std::vector<int>* out,
                             uint32_t dynamic_shared = 0);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_TEST_KERNELS_H_
