#include "tests/jit/test_kernels.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "gtest/gtest.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "format/trace_abi.h"

namespace warptrace::testing {

namespace {

constexpr char kBlockStatsSource[] = R"(#include "recorder.cuh"

constexpr warptrace::recorder::Config kWtConfig = {
    /*unit_threads=*/32, /*unit_first_thread=*/0, /*recorder_offset=*/0,
    /*units_per_block=*/2, /*capacity=*/$CAPACITY, /*shared=*/$SHARED,
    /*sample_begin=*/0, /*sample_end=*/0xffffffffu, /*sample_stride=*/1};

extern "C" __global__ void block_stats(const int* in, int* block_sums, int* warp_sums,
                                       int* total, int* maximum,
                                       unsigned int* warptrace_trace) {
  WARPTRACE_DYNAMIC_SHARED(unsigned int, wt_smem);
  __shared__ int partial[64];
  using warptrace::abi::MakeTag;
  const unsigned int tid = threadIdx.x;
  const unsigned int block = blockIdx.x;
  warptrace::recorder::UnitState wt;
  warptrace::recorder::Prologue(wt, kWtConfig, warptrace_trace, kWtConfig.shared ? wt_smem : 0,
                              tid, block);
  warptrace::recorder::Record(wt, MakeTag(0, false));
  const int v = in[block * 64 + tid];
  partial[tid] = v;
  atomicAdd(total, v);
  atomicMax(maximum, v);
  warptrace::recorder::Record(wt, MakeTag(2, false));
  __syncthreads();
  warptrace::recorder::Record(wt, MakeTag(2, true));
  for (unsigned int stride = 32; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  int down = v, all = v;
  for (int i = 0; i < 2; ++i) {
    warptrace::recorder::Record(wt, MakeTag(1, false));
    if (i == 0) {
      for (int offset = 16; offset > 0; offset /= 2) down += __shfl_down_sync(0xffffffffu, down, offset);
    } else {
      for (int mask = 16; mask > 0; mask /= 2) all += __shfl_xor_sync(0xffffffffu, all, mask);
    }
    warptrace::recorder::Record(wt, MakeTag(1, true));
  }
  __syncwarp();
  if (tid % 32 == 0) warp_sums[block * 2 + tid / 32] = down + (down == all ? 0 : 1000000);
  if (tid == 0) block_sums[block] = partial[0];
  warptrace::recorder::Record(wt, MakeTag(0, true));
  warptrace::recorder::Epilogue(wt, kWtConfig, warptrace_trace, tid, block);
}

#ifdef WARPTRACE_HOST_BACKEND
extern "C" void warptrace_host_entry_block_stats(void** args) {
  block_stats(*(const int**)args[0], *(int**)args[1], *(int**)args[2], *(int**)args[3],
              *(int**)args[4], *(unsigned int**)args[5]);
}
#endif
)";

}  // namespace

KernelSource BlockStatsKernel(uint32_t num_blocks, uint32_t capacity, bool shared) {
  KernelSource k;
  k.kernel_name = "block_stats";
  k.host_entry = "warptrace_host_entry_block_stats";
  k.source = absl::StrReplaceAll(kBlockStatsSource, {{"$CAPACITY", absl::StrCat(capacity)},
                                                     {"$SHARED", shared ? "1" : "0"}});
  k.headers = EmbeddedDeviceHeaders();
  k.params = {{"const int*", "in", 8, true},      {"int*", "block_sums", 8, true},
              {"int*", "warp_sums", 8, true},     {"int*", "total", 8, true},
              {"int*", "maximum", 8, true},       {"unsigned int*", "warptrace_trace", 8, true}};
  k.grid = {num_blocks, 1, 1};
  k.block = {kBlockStatsThreads, 1, 1};
  k.dynamic_shared_bytes = shared ? 2 * capacity * abi::kEventWords * 4 : 0;
  k.profiled = true;
  TraceLayout layout;
  layout.kernel_name = k.kernel_name;
  layout.grid = k.grid;
  layout.block = k.block;
  layout.unit = UnitSpec::Warp();
  layout.capacity = capacity;
  layout.placement = shared ? Placement::kShared : Placement::kGlobal;
  layout.sites = {{0, "block_stats", SiteKind::kKernel, "test_kernels.cc"},
                  {1, "loop", SiteKind::kLoopBody, "test_kernels.cc"},
                  {2, "sync", SiteKind::kBarrierWait, "test_kernels.cc"}};
  k.layout = layout;
  return k;
}

std::vector<uint32_t> BlockStatsTags() {
  return {abi::MakeTag(0, false), abi::MakeTag(2, false), abi::MakeTag(2, true),
          abi::MakeTag(1, false), abi::MakeTag(1, true),  abi::MakeTag(1, false),
          abi::MakeTag(1, true),  abi::MakeTag(0, true)};
}

KernelSource SimpleKernel(const std::string& name, const std::string& body,
                          const std::string& prelude) {
  KernelSource k;
  k.kernel_name = name;
  k.host_entry = "warptrace_host_entry_" + name;
  k.source = absl::StrCat(prelude, "\nextern \"C\" __global__ void ", name, "(int* out) {\n",
                          body, "\n}\n#ifdef WARPTRACE_HOST_BACKEND\nextern \"C\" void ",
                          k.host_entry, "(void** args) { ", name,
                          "(*(int**)args[0]); }\n#endif\n");
  k.params = {{"int*", "out", 8, true}};
  return k;
}

absl::Status RunSimpleKernel(Device& device, const KernelSource& kernel, Dim3 grid, Dim3 block,
                             size_t out_ints, std::vector<int>* out, uint32_t dynamic_shared) {
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = device.Load(kernel);
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(device, out_ints * 4);
  if (!buffer.ok()) return buffer.status();
  if (absl::Status s = buffer->Zero(); !s.ok()) return s;
  void* ptr = buffer->get();
  void* args[] = {&ptr};
  absl::Status launched = device.Launch(**loaded, grid, block, dynamic_shared, args);
  if (launched.ok()) launched = device.Synchronize();
  out->resize(out_ints);
  if (absl::Status s = buffer->CopyTo(out->data(), out_ints * 4); !s.ok()) return s;
  return launched;
}

absl::StatusOr<BlockStatsRun> RunBlockStats(Device& device, uint32_t num_blocks,
                                            uint32_t capacity, bool shared) {
  const KernelSource source = BlockStatsKernel(num_blocks, capacity, shared);
  absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel = device.Load(source);
  if (!kernel.ok()) return kernel.status();
  BlockStatsRun run;
  const uint32_t n = num_blocks * kBlockStatsThreads;
  for (uint32_t i = 0; i < n; ++i) run.in.push_back(static_cast<int>((i * 37) % 101) - 50);
  const uint64_t trace_words = BufferBytes(*source.layout) / 4;
  absl::StatusOr<DeviceBuffer> in = DeviceBuffer::Allocate(device, n * 4);
  absl::StatusOr<DeviceBuffer> block_sums = DeviceBuffer::Allocate(device, num_blocks * 4);
  absl::StatusOr<DeviceBuffer> warp_sums = DeviceBuffer::Allocate(device, num_blocks * 8);
  absl::StatusOr<DeviceBuffer> scalars = DeviceBuffer::Allocate(device, 8);
  absl::StatusOr<DeviceBuffer> trace = DeviceBuffer::Allocate(device, trace_words * 4);
  for (auto* buffer : {&in, &block_sums, &warp_sums, &scalars, &trace}) {
    if (!buffer->ok()) return buffer->status();
    if (absl::Status s = (*buffer)->Zero(); !s.ok()) return s;
  }
  const int initial[2] = {0, -1000};
  if (absl::Status s = in->CopyFrom(run.in.data(), n * 4); !s.ok()) return s;
  if (absl::Status s = scalars->CopyFrom(initial, 8); !s.ok()) return s;
  void* in_ptr = in->get();
  void* block_sums_ptr = block_sums->get();
  void* warp_sums_ptr = warp_sums->get();
  void* total_ptr = scalars->get();
  void* maximum_ptr = static_cast<char*>(scalars->get()) + 4;
  void* trace_ptr = trace->get();
  void* args[] = {&in_ptr, &block_sums_ptr, &warp_sums_ptr, &total_ptr, &maximum_ptr, &trace_ptr};
  if (absl::Status s = device.Launch(**kernel, source.grid, source.block,
                                     source.dynamic_shared_bytes, args);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = device.Synchronize(); !s.ok()) return s;
  run.block_sums.resize(num_blocks);
  run.warp_sums.resize(2 * num_blocks);
  run.trace.resize(trace_words);
  int result[2];
  for (absl::Status s : {block_sums->CopyTo(run.block_sums.data(), num_blocks * 4),
                         warp_sums->CopyTo(run.warp_sums.data(), num_blocks * 8),
                         scalars->CopyTo(result, 8), trace->CopyTo(run.trace.data(), trace_words * 4)}) {
    if (!s.ok()) return s;
  }
  run.total = result[0];
  run.maximum = result[1];
  return run;
}

void ExpectBlockStatsOutputs(const BlockStatsRun& run, uint32_t num_blocks) {
  for (uint32_t b = 0; b < num_blocks; ++b) {
    const auto block_begin = run.in.begin() + b * 64;
    EXPECT_EQ(run.block_sums[b], std::accumulate(block_begin, block_begin + 64, 0)) << b;
    EXPECT_EQ(run.warp_sums[2 * b], std::accumulate(block_begin, block_begin + 32, 0)) << b;
    EXPECT_EQ(run.warp_sums[2 * b + 1], std::accumulate(block_begin + 32, block_begin + 64, 0))
        << b;
  }
  EXPECT_EQ(run.total, std::accumulate(run.in.begin(), run.in.end(), 0));
  EXPECT_EQ(run.maximum, *std::max_element(run.in.begin(), run.in.end()));
}

void ExpectBlockStatsRecords(const BlockStatsRun& run, uint32_t num_blocks,
                             uint32_t capacity, bool shared, uint32_t num_sms, bool host) {
  const std::vector<uint32_t> tags = BlockStatsTags();
  const uint64_t record_words = abi::RecordWords(capacity);
  ASSERT_EQ(run.trace.size(), num_blocks * 2 * record_words);
  for (uint32_t b = 0; b < num_blocks; ++b) {
    for (uint32_t u = 0; u < 2; ++u) {
      SCOPED_TRACE(::testing::Message() << "block " << b << " unit " << u);
      const uint32_t* record = run.trace.data() + (b * 2 + u) * record_words;
      abi::RecordHeader h;
      std::memcpy(&h, record, sizeof(h));
      EXPECT_EQ(h.magic, abi::kTraceMagic);
      EXPECT_EQ(h.version, abi::kTraceVersion);
      EXPECT_EQ(h.block_linear, b);
      EXPECT_EQ(h.unit_index, u);
      EXPECT_LT(h.sm_id, num_sms);
      EXPECT_EQ(h.attempted, kBlockStatsEvents);
      EXPECT_EQ(h.capacity, capacity);
      EXPECT_EQ(h.flags, abi::kFlagComplete | (shared ? abi::kFlagShared : 0u));
      EXPECT_EQ(h.header_words, abi::kHeaderWords);
      // Version 3: the epilogue folded the stored events into the checksum (trace_abi.h).
      EXPECT_EQ(h.checksum,
                abi::FoldEventSlots(abi::HeaderChecksum(h.magic, h.version, h.sm_id,
                                                        h.block_linear, h.unit_index, h.capacity),
                                    record + abi::kHeaderWords,
                                    std::min(h.attempted, h.capacity)));
      const uint64_t start_ns = (uint64_t{h.start_globaltimer_hi} << 32) | h.start_globaltimer_lo;
      const uint64_t end_ns = (uint64_t{h.end_globaltimer_hi} << 32) | h.end_globaltimer_lo;
      ASSERT_GE(end_ns, start_ns);
      if (host) {
        // The host clock runs at exactly 1.5 cycles per globaltimer ns (up to the rounding
        // of the two separate reads, a few ns apart).
        const double cycles = static_cast<uint32_t>(h.end_clock - h.start_clock);
        EXPECT_NEAR(cycles, 1.5 * static_cast<double>(end_ns - start_ns),
                    1.5 * 2000 + 0.001 * cycles);
      }
      const uint32_t written = std::min(kBlockStatsEvents, capacity);
      uint32_t previous_clock = h.start_clock;
      for (uint32_t e = 0; e < written; ++e) {
        const uint32_t tag = record[abi::kHeaderWords + 2 * e];
        const uint32_t clock = record[abi::kHeaderWords + 2 * e + 1];
        EXPECT_EQ(tag, tags[e]) << "event " << e;
        EXPECT_LE(static_cast<uint32_t>(clock - previous_clock),
                  static_cast<uint32_t>(h.end_clock - previous_clock))
            << "event " << e << " out of order";
        previous_clock = clock;
      }
      for (uint32_t e = written; e < capacity; ++e) {
        EXPECT_EQ(record[abi::kHeaderWords + 2 * e], 0u) << "slot " << e << " was written";
      }
    }
  }
}

}  // namespace warptrace::testing
