// Tests the device recorder (format/recorder.cuh) two ways:
//   * compiled by NVRTC for sm_80 and sm_90, in every unit kind and placement, with an
//     empty log (no warnings) under NVRTC's strictest warning options;
//   * compiled here as host C++ and run over simulated blocks, with every record checked
//     word for word against the ABI in trace_abi.h.
#include "format/recorder.cuh"

#include <nvrtc.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/embedded_headers.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// The host backend's clock hooks, defined by the includer (see recorder.cuh). Each simulated
// thread gets its own deterministic sequence, so expected values are known exactly.
namespace {
thread_local uint32_t g_clock_base = 0;
thread_local uint32_t g_clock_calls = 0;
thread_local uint64_t g_gt_base = 0;
thread_local uint32_t g_gt_calls = 0;
thread_local uint32_t g_smid = 0;
constexpr uint32_t kClockStep = 7;
constexpr uint64_t kGtStep = 1000;
}  // namespace

extern "C" unsigned int warptrace_host_clock(void) {
  return g_clock_base + kClockStep * g_clock_calls++;
}
extern "C" unsigned long long warptrace_host_globaltimer(void) {
  return g_gt_base + kGtStep * g_gt_calls++;
}
extern "C" unsigned int warptrace_host_smid(void) { return g_smid; }

namespace warptrace {
namespace {

using ::testing::IsEmpty;
using recorder::Config;
using recorder::UnitState;

// ---------------------------------------------------------------------------------------
// NVRTC: the recorder compiles warning-free for every unit kind and placement.

struct DeviceCase {
  std::string name;
  Config config;
  uint32_t block_threads;
};

std::vector<DeviceCase> DeviceCases() {
  // {unit_threads, unit_first_thread, recorder_offset, units_per_block, capacity, shared,
  //  sample_begin, sample_end, sample_stride}
  std::vector<DeviceCase> cases;
  for (uint32_t shared : {0u, 1u}) {
    const std::string placement = shared ? "Shared" : "Global";
    cases.push_back({"Warp" + placement, {32, 0, 0, 8, 6, shared, 0, 0xffffffffu, 1}, 256});
    cases.push_back(
        {"Warpgroup" + placement, {128, 0, 0, 2, 6, shared, 0, 0xffffffffu, 1}, 256});
    cases.push_back({"Block" + placement, {256, 0, 0, 1, 6, shared, 0, 0xffffffffu, 1}, 256});
    cases.push_back(
        {"CustomSubset" + placement, {64, 128, 3, 1, 6, shared, 2, 100, 3}, 256});
  }
  return cases;
}

// A small kernel that records a region around its work, the way generated code does.
std::string DeviceKernelSource(const DeviceCase& c) {
  const Config& k = c.config;
  const uint32_t shared_words = k.units_per_block * k.capacity * 2;
  return absl::StrFormat(R"(#include "recorder.cuh"

constexpr warptrace::recorder::Config kWtConfig = {%uu, %uu, %uu, %uu, %uu, %uu, %uu, %uu, %uu};

extern "C" __global__ void __launch_bounds__(%u) scale(float* data, float a, int n,
                                                        unsigned int* warptrace_trace) {
  %s
  const unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned int bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  warptrace::recorder::UnitState wt;
  warptrace::recorder::Prologue(wt, kWtConfig, warptrace_trace, %s, tid, bid);
  warptrace::recorder::Record(wt, warptrace::abi::MakeTag(0u, false));
  const int i = static_cast<int>(bid * blockDim.x + tid);
  if (i >= n) {
    warptrace::recorder::Record(wt, warptrace::abi::MakeTag(0u, true));
    warptrace::recorder::Epilogue(wt, kWtConfig, warptrace_trace, tid, bid);
    return;
  }
  for (int j = 0; j < 2; ++j) {
    warptrace::recorder::Record(wt, warptrace::abi::MakeTag(1u, false));
    warptrace::recorder::RecordWithPayload(wt, warptrace::abi::MakeTag(2u, false), 7u,
                                         static_cast<unsigned int>(j));
    data[i] = data[i] * a + 1.0f;
    warptrace::recorder::Record(wt, warptrace::abi::MakeTag(1u, true));
    // A grouped run, as jit/emit/record_runs.h writes one.
    warptrace::recorder::RecordAt<0>(wt, warptrace::abi::MakeTag(3u, false));
    warptrace::recorder::RecordWithPayloadAt<1>(wt, warptrace::abi::MakeTag(4u, false), 5u, 6u);
    warptrace::recorder::RecordAt<3>(wt, warptrace::abi::MakeTag(3u, true));
    warptrace::recorder::Advance<4>(wt);
  }
  warptrace::recorder::Record(wt, warptrace::abi::MakeTag(0u, true));
  warptrace::recorder::Epilogue(wt, kWtConfig, warptrace_trace, tid, bid);
}
)",
                         k.unit_threads, k.unit_first_thread, k.recorder_offset,
                         k.units_per_block, k.capacity, k.shared, k.sample_begin,
                         k.sample_end, k.sample_stride, c.block_threads,
                         k.shared ? absl::StrFormat("__shared__ __align__(8) unsigned int "
                                                    "wt_smem[%u];",
                                                    shared_words)
                                  : "",
                         k.shared ? "wt_smem" : "nullptr");
}

struct NvrtcResult {
  nvrtcResult compile = NVRTC_SUCCESS;
  std::string log;
  std::string ptx;
};

NvrtcResult CompileWithNvrtc(const std::string& source, const std::string& arch,
                             const std::vector<std::string>& extra_options) {
  std::vector<const char*> header_sources, header_names;
  for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
    header_sources.push_back(f.contents.c_str());
    header_names.push_back(f.name.c_str());
  }
  NvrtcResult result;
  nvrtcProgram prog = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "recorder_kernel.cu",
                               static_cast<int>(header_sources.size()), header_sources.data(),
                               header_names.data()),
            NVRTC_SUCCESS);
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "--std=c++17"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  result.compile =
      nvrtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  result.log.assign(log_size, '\0');
  nvrtcGetProgramLog(prog, result.log.data());
  // The log is NUL-terminated; an empty log has size 1.
  while (!result.log.empty() && result.log.back() == '\0') result.log.pop_back();
  if (result.compile == NVRTC_SUCCESS) {
    size_t ptx_size = 0;
    nvrtcGetPTXSize(prog, &ptx_size);
    result.ptx.assign(ptx_size, '\0');
    nvrtcGetPTX(prog, result.ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  return result;
}

// NVRTC 13 has no -Werror/-Wall; every front-end warning lands in the program log, so the
// tests require an empty log. These turn on ptxas's opt-in diagnostics that matter for
// instrumentation (spills, local memory, double precision), which also land in the log.
const std::vector<std::string>& StrictOptions() {
  static const std::vector<std::string>* const options = new std::vector<std::string>{
      "--ptxas-options=--warn-on-spills",
      "--ptxas-options=--warn-on-local-memory-usage",
      "--ptxas-options=--warn-on-double-precision-use",
      "--display-error-number",
  };
  return *options;
}

void PrintTo(const DeviceCase& c, std::ostream* os) { *os << c.name; }

class RecorderNvrtcTest
    : public ::testing::TestWithParam<std::tuple<std::string, DeviceCase>> {};

TEST_P(RecorderNvrtcTest, CompilesWithEmptyLog) {
  const auto& [arch, c] = GetParam();
  const NvrtcResult result = CompileWithNvrtc(DeviceKernelSource(c), arch, StrictOptions());
  ASSERT_EQ(result.compile, NVRTC_SUCCESS) << result.log;
  EXPECT_THAT(result.log, IsEmpty());
  EXPECT_THAT(result.ptx, ::testing::HasSubstr(".entry scale"));
  // The recorder reads the SM clock and stores its events.
  EXPECT_THAT(result.ptx, ::testing::HasSubstr("%clock"));
  EXPECT_THAT(result.ptx, ::testing::HasSubstr("%globaltimer"));
  EXPECT_THAT(result.ptx, ::testing::HasSubstr("%smid"));
}

INSTANTIATE_TEST_SUITE_P(
    ArchUnitPlacement, RecorderNvrtcTest,
    ::testing::Combine(::testing::Values("sm_80", "sm_90"), ::testing::ValuesIn(DeviceCases())),
    [](const ::testing::TestParamInfo<RecorderNvrtcTest::ParamType>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

TEST(RecorderNvrtcTest, EmptyLogCheckSeesFrontEndAndPtxasWarnings) {
  // Proves the empty-log check above can fail: a front-end warning and a ptxas warning
  // (enabled by StrictOptions) both reach the log of a successful compile.
  const NvrtcResult unused = CompileWithNvrtc(
      "__global__ void k(int* p) { int unused_variable = 0; *p = 1; }", "sm_90",
      StrictOptions());
  EXPECT_EQ(unused.compile, NVRTC_SUCCESS);
  EXPECT_THAT(unused.log, ::testing::HasSubstr("unused_variable"));
  const NvrtcResult fp64 = CompileWithNvrtc(
      "__global__ void k(double* p) { *p = *p * 1.5 + 2.0; }", "sm_80", StrictOptions());
  EXPECT_EQ(fp64.compile, NVRTC_SUCCESS);
  EXPECT_THAT(fp64.log, ::testing::HasSubstr("double precision"));
}

// ---------------------------------------------------------------------------------------
// Host C++: the recorder runs on simulated blocks; records are checked word for word.

constexpr uint32_t kGuardWord = 0xDEADBEEFu;
constexpr uint32_t kGuardWords = 64;

// One simulated launch: `blocks` blocks of `block_threads` threads, run thread by thread.
// Recorder threads record `events` events with site ids (k % 5), entries then exits.
struct Launch {
  Config config;
  uint32_t blocks = 1;
  uint32_t block_threads = 32;
  uint32_t events = 4;
  bool early_epilogue_twice = false;  // call Epilogue twice (an early-return path)
};

uint32_t SampledBlocks(const Config& c, uint32_t blocks) {
  const uint32_t end = c.sample_end < blocks ? c.sample_end : blocks;
  if (c.sample_begin >= end) return 0;
  return (end - c.sample_begin + c.sample_stride - 1) / c.sample_stride;
}

uint32_t ClockBase(uint32_t block, uint32_t thread) { return 1000u * block + 50000u * thread; }
uint64_t GtBase(uint32_t block, uint32_t thread) {
  return (uint64_t{3} << 32) + 10'000'000ull * block + 100'000ull * thread;
}
uint32_t SmOf(uint32_t block) { return 100u + block % 3; }
uint32_t TagOf(uint32_t k) { return abi::MakeTag(k % 5, k % 2 == 1); }

// Runs the launch through the recorder into a buffer sized by the ABI plus guard words.
std::vector<uint32_t> RunOnHost(const Launch& l) {
  const Config& c = l.config;
  const uint64_t records = uint64_t{SampledBlocks(c, l.blocks)} * c.units_per_block;
  std::vector<uint32_t> buffer(abi::RecordWords(c.capacity) * records + kGuardWords, 0u);
  for (uint32_t g = 0; g < kGuardWords; ++g) buffer[buffer.size() - 1 - g] = kGuardWord;
  for (uint32_t b = 0; b < l.blocks; ++b) {
    // The block's shared staging area, poisoned so a missing copy-out shows.
    std::vector<uint64_t> smem(uint64_t{c.units_per_block} * c.capacity + 1,
                               0x5555555555555555ull);
    for (uint32_t t = 0; t < l.block_threads; ++t) {
      g_clock_base = ClockBase(b, t);
      g_clock_calls = 0;
      g_gt_base = GtBase(b, t);
      g_gt_calls = 0;
      g_smid = SmOf(b);
      UnitState s;
      recorder::Prologue(s, c, buffer.data(),
                       c.shared ? reinterpret_cast<uint32_t*>(smem.data()) : nullptr, t, b);
      for (uint32_t k = 0; k < l.events; ++k) recorder::Record(s, TagOf(k));
      recorder::Epilogue(s, c, buffer.data(), t, b);
      if (l.early_epilogue_twice) {
        g_gt_calls += 5;  // a second epilogue that acted would stamp different times
        g_clock_calls += 5;
        recorder::Epilogue(s, c, buffer.data(), t, b);
      }
    }
    EXPECT_EQ(smem.back(), 0x5555555555555555ull)
        << "block " << b << " wrote past its shared staging area";
  }
  return buffer;
}

// The expected buffer, built from the ABI's word offsets alone (not from the recorder).
std::vector<uint32_t> ExpectedBuffer(const Launch& l) {
  const Config& c = l.config;
  const uint64_t record_words = abi::RecordWords(c.capacity);
  const uint32_t sampled = SampledBlocks(c, l.blocks);
  std::vector<uint32_t> buffer(record_words * sampled * c.units_per_block + kGuardWords, 0u);
  for (uint32_t g = 0; g < kGuardWords; ++g) buffer[buffer.size() - 1 - g] = kGuardWord;
  for (uint32_t ordinal = 0; ordinal < sampled; ++ordinal) {
    const uint32_t b = c.sample_begin + ordinal * c.sample_stride;
    for (uint32_t unit = 0; unit < c.units_per_block; ++unit) {
      const uint32_t t = c.unit_first_thread + unit * c.unit_threads + c.recorder_offset;
      uint32_t* r = buffer.data() + (uint64_t{ordinal} * c.units_per_block + unit) * record_words;
      const uint64_t start_gt = GtBase(b, t);
      const uint64_t end_gt = GtBase(b, t) + kGtStep;
      const uint32_t start_clock = ClockBase(b, t);
      const uint32_t end_clock = ClockBase(b, t) + kClockStep * (l.events + 1);
      const uint32_t words[abi::kHeaderWords] = {
          0x43525457u,  // 'WTRC'
          5u,           // version
          SmOf(b),
          b,
          unit,
          l.events,
          c.capacity,
          1u | (c.shared ? 2u : 0u),
          start_clock,
          end_clock,
          static_cast<uint32_t>(start_gt),
          static_cast<uint32_t>(start_gt >> 32),
          static_cast<uint32_t>(end_gt),
          static_cast<uint32_t>(end_gt >> 32),
          16u,
          0x43525457u ^ 5u ^ SmOf(b) ^ b ^ unit ^ c.capacity,
      };
      std::memcpy(r, words, sizeof(words));
      // Version 3: the checksum word folds the stored slots in, FNV-1a over their words.
      uint32_t sum = words[15];
      for (uint32_t k = 0; k < l.events && k < c.capacity; ++k) {
        r[16 + 2 * k] = TagOf(k);
        r[16 + 2 * k + 1] = ClockBase(b, t) + kClockStep * (k + 1);
        sum = ((sum ^ r[16 + 2 * k]) * 16777619u ^ r[16 + 2 * k + 1]) * 16777619u;
      }
      r[15] = sum;
    }
  }
  return buffer;
}

// Compares two buffers and names the first differing word by record and field.
void ExpectSameWords(const std::vector<uint32_t>& actual, const std::vector<uint32_t>& expected,
                     uint32_t capacity) {
  ASSERT_EQ(actual.size(), expected.size());
  const uint64_t record_words = abi::RecordWords(capacity);
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    ADD_FAILURE() << absl::StrFormat(
        "word %d (record %d, word %d of the record) is 0x%08x, expected 0x%08x", i,
        i / record_words, i % record_words, actual[i], expected[i]);
    return;
  }
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), actual.size() * 4), 0);
}

TEST(RecorderHostTest, HeaderFieldsSitWhereTheAbiSays) {
  Launch l;
  l.config = {32, 0, 0, 1, 4, 0, 0, 0xffffffffu, 1};
  l.blocks = 1;
  l.events = 2;
  const std::vector<uint32_t> buffer = RunOnHost(l);
  abi::RecordHeader h;
  std::memcpy(&h, buffer.data(), sizeof(h));
  EXPECT_EQ(h.magic, abi::kTraceMagic);
  EXPECT_EQ(buffer[0], 0x43525457u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buffer.data()), 4), "WTRC");
  EXPECT_EQ(h.version, abi::kTraceVersion);
  EXPECT_EQ(h.sm_id, SmOf(0));
  EXPECT_EQ(h.attempted, 2u);
  EXPECT_EQ(h.capacity, 4u);
  EXPECT_EQ(h.flags, abi::kFlagComplete);
  EXPECT_EQ(h.header_words, abi::kHeaderWords);
  EXPECT_EQ(h.checksum,
            abi::FoldEventSlots(abi::HeaderChecksum(h.magic, h.version, h.sm_id,
                                                    h.block_linear, h.unit_index, h.capacity),
                                buffer.data() + abi::kHeaderWords, 2));
  abi::Event e;
  std::memcpy(&e, buffer.data() + abi::kHeaderWords + abi::kEventWords, sizeof(e));
  EXPECT_EQ(e.tag, TagOf(1));
  EXPECT_TRUE(abi::TagIsExit(e.tag));
  EXPECT_EQ(abi::TagSite(e.tag), 1u);
  EXPECT_EQ(e.clock, ClockBase(0, 0) + 2 * kClockStep);
}

struct HostCase {
  std::string name;
  Launch launch;
};

void PrintTo(const HostCase& c, std::ostream* os) { *os << c.name; }

class RecorderHostTest : public ::testing::TestWithParam<HostCase> {};

TEST_P(RecorderHostTest, WritesRecordsWordForWordAsTheAbiSays) {
  const Launch& l = GetParam().launch;
  ExpectSameWords(RunOnHost(l), ExpectedBuffer(l), l.config.capacity);
}

std::vector<HostCase> HostCases() {
  std::vector<HostCase> cases;
  for (uint32_t shared : {0u, 1u}) {
    const std::string p = shared ? "Shared" : "Global";
    // {unit_threads, first, recorder_offset, units_per_block, capacity, shared,
    //  sample_begin, sample_end, sample_stride}
    cases.push_back({"Warp" + p, {{32, 0, 0, 4, 6, shared, 0, 0xffffffffu, 1}, 3, 128, 6}});
    cases.push_back(
        {"Warpgroup" + p, {{128, 0, 0, 2, 8, shared, 0, 0xffffffffu, 1}, 2, 256, 5}});
    cases.push_back({"Block" + p, {{96, 0, 0, 1, 4, shared, 0, 0xffffffffu, 1}, 4, 96, 4}});
    // A custom subset [40, 64) recorded by thread 45 (recorder offset 5).
    cases.push_back(
        {"CustomSubsetWithRecorderOffset" + p, {{24, 40, 5, 1, 6, shared, 0, 0xffffffffu, 1},
                                                2, 96, 3}});
    // Events past capacity are counted, never written: the neighbouring record (the next
    // unit's header) stays intact.
    cases.push_back(
        {"OverflowIsCountedNotWritten" + p, {{32, 0, 0, 2, 3, shared, 0, 0xffffffffu, 1},
                                             2, 64, 11}});
    cases.push_back({"ZeroEvents" + p, {{32, 0, 0, 2, 3, shared, 0, 0xffffffffu, 1}, 1, 64, 0}});
    // Blocks 1, 4, 7 record (ordinals 0, 1, 2); the rest write nothing at all.
    cases.push_back(
        {"SampledBlocksOnlyRecord" + p, {{32, 0, 0, 2, 4, shared, 1, 8, 3}, 10, 64, 3}});
    // An early return calls Epilogue, then the common exit calls it again: a no-op.
    Launch twice{{32, 0, 0, 2, 4, shared, 0, 0xffffffffu, 1}, 2, 64, 3};
    twice.early_epilogue_twice = true;
    cases.push_back({"SecondEpilogueIsANoOp" + p, twice});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(UnitsPlacementsAndEdges, RecorderHostTest,
                         ::testing::ValuesIn(HostCases()),
                         [](const ::testing::TestParamInfo<HostCase>& info) {
                           return info.param.name;
                         });

TEST(RecorderHostTest, OverflowLeavesNeighbourRecordUntouched) {
  // Capacity 2, 9 events: without the bound, events 2.. would land on unit 1's header.
  Launch l{{32, 0, 0, 2, 2, 0, 0, 0xffffffffu, 1}, 1, 64, 9};
  const std::vector<uint32_t> buffer = RunOnHost(l);
  abi::RecordHeader unit0, unit1;
  std::memcpy(&unit0, buffer.data(), sizeof(unit0));
  std::memcpy(&unit1, buffer.data() + abi::RecordWords(2), sizeof(unit1));
  EXPECT_EQ(unit0.attempted, 9u);
  EXPECT_EQ(unit0.capacity, 2u);
  EXPECT_EQ(unit1.magic, abi::kTraceMagic);
  EXPECT_EQ(unit1.unit_index, 1u);
  EXPECT_EQ(unit1.attempted, 9u);
  EXPECT_EQ(buffer[buffer.size() - kGuardWords], kGuardWord);
}

TEST(RecorderHostTest, UnsampledBlockWritesNothing) {
  // One sampled block (block 2 of 4): the buffer holds its records only; blocks 0, 1, 3 run
  // the recorder and must leave every word as they found it.
  Launch l{{32, 0, 0, 1, 2, 0, 2, 3, 1}, 4, 32, 2};
  const std::vector<uint32_t> buffer = RunOnHost(l);
  ASSERT_EQ(buffer.size(), abi::RecordWords(2) + kGuardWords);
  abi::RecordHeader h;
  std::memcpy(&h, buffer.data(), sizeof(h));
  EXPECT_EQ(h.block_linear, 2u);
}

TEST(RecorderHostTest, NonRecorderThreadsHaveNoCapacity) {
  Config c{32, 0, 0, 2, 4, 0, 0, 0xffffffffu, 1};
  std::vector<uint32_t> buffer(abi::RecordWords(4) * 2, 0u);
  for (uint32_t t = 0; t < 64; ++t) {
    UnitState s;
    recorder::Prologue(s, c, buffer.data(), nullptr, t, 0);
    const bool records = t % 32 == 0;
    EXPECT_EQ(s.left, records ? 4 : 0) << "thread " << t;
    EXPECT_EQ(recorder::RecordedUnit(c, t, 0), records ? t / 32 : 2u) << "thread " << t;
  }
}

TEST(RecorderHostTest, PayloadSlotFollowsItsEventAndIsNeverStoredWithoutIt) {
  // Events: plain, payload (11, 12), payload exit (13, 14) = 5 slots. At every capacity
  // the record holds a prefix of those slots, never a payload without its event, and
  // nothing past the record.
  const uint32_t slot_words[5][2] = {{abi::MakeTag(0, false), 7},
                                     {abi::MakeTag(1, false) | abi::kPayloadFlag, 14},
                                     {11, 12},
                                     {abi::MakeTag(1, true) | abi::kPayloadFlag, 21},
                                     {13, 14}};
  for (uint32_t capacity : {1u, 2u, 3u, 4u, 5u, 6u}) {
    SCOPED_TRACE(absl::StrCat("capacity ", capacity));
    const Config c{32, 0, 0, 1, capacity, 0, 0, 0xffffffffu, 1};
    std::vector<uint32_t> buffer(abi::RecordWords(capacity) + kGuardWords, 0u);
    for (uint32_t g = 0; g < kGuardWords; ++g) buffer[buffer.size() - 1 - g] = kGuardWord;
    g_clock_base = 0;
    g_clock_calls = 0;
    g_gt_base = GtBase(0, 0);
    g_gt_calls = 0;
    UnitState s;
    recorder::Prologue(s, c, buffer.data(), nullptr, 0, 0);  // clock read 0
    recorder::Record(s, abi::MakeTag(0, false));                // clock 7
    recorder::RecordWithPayload(s, abi::MakeTag(1, false), 11, 12);  // clock 14
    recorder::RecordWithPayload(s, abi::MakeTag(1, true), 13, 14);   // clock 21
    recorder::Epilogue(s, c, buffer.data(), 0, 0);
    abi::RecordHeader h;
    std::memcpy(&h, buffer.data(), sizeof(h));
    EXPECT_EQ(h.version, 5u);
    EXPECT_EQ(h.attempted, 5u);
    for (uint32_t k = 0; k < capacity; ++k) {
      const uint32_t* slot = buffer.data() + abi::kHeaderWords + 2 * k;
      const uint32_t want0 = k < 5 ? slot_words[k][0] : 0u;
      const uint32_t want1 = k < 5 ? slot_words[k][1] : 0u;
      EXPECT_EQ(slot[0], want0) << "slot " << k;
      EXPECT_EQ(slot[1], want1) << "slot " << k;
    }
    EXPECT_EQ(buffer[abi::RecordWords(capacity)], kGuardWord);
  }
}

// The slots of a unit that records plain, payload, payload exit (5 slots) at `capacity`,
// with the plain calls or (grouped) as one run at immediate offsets and one Advance.
std::vector<uint32_t> RecordFiveSlots(uint32_t capacity, bool grouped, int* left) {
  const Config c{32, 0, 0, 1, capacity, 0, 0, 0xffffffffu, 1};
  std::vector<uint32_t> buffer(abi::RecordWords(capacity) + kGuardWords, 0u);
  for (uint32_t g = 0; g < kGuardWords; ++g) buffer[buffer.size() - 1 - g] = kGuardWord;
  g_clock_base = 0;
  g_clock_calls = 0;
  g_gt_base = GtBase(0, 0);
  g_gt_calls = 0;
  UnitState s;
  recorder::Prologue(s, c, buffer.data(), nullptr, 0, 0);
  if (grouped) {
    recorder::RecordAt<0>(s, abi::MakeTag(0, false));
    recorder::RecordWithPayloadAt<1>(s, abi::MakeTag(1, false), 11, 12);
    recorder::RecordWithPayloadAt<3>(s, abi::MakeTag(1, true), 13, 14);
    recorder::Advance<5>(s);
  } else {
    recorder::Record(s, abi::MakeTag(0, false));
    recorder::RecordWithPayload(s, abi::MakeTag(1, false), 11, 12);
    recorder::RecordWithPayload(s, abi::MakeTag(1, true), 13, 14);
  }
  *left = s.left;
  recorder::Epilogue(s, c, buffer.data(), 0, 0);
  return buffer;
}

TEST(RecorderHostTest, GroupedRunWritesTheSlotsThePlainCallsWrite) {
  // Byte for byte the same record (slots, attempted count, checksum, guard) at every
  // capacity, the edge included: the grouped run checks each slot against its offset.
  for (uint32_t capacity : {1u, 2u, 3u, 4u, 5u, 6u}) {
    SCOPED_TRACE(absl::StrCat("capacity ", capacity));
    int plain_left = 0;
    int grouped_left = 0;
    const std::vector<uint32_t> plain = RecordFiveSlots(capacity, false, &plain_left);
    const std::vector<uint32_t> grouped = RecordFiveSlots(capacity, true, &grouped_left);
    EXPECT_EQ(grouped, plain);
    EXPECT_EQ(grouped_left, plain_left);
    EXPECT_EQ(grouped_left, static_cast<int>(capacity) - 5);
  }
}

}  // namespace
}  // namespace warptrace
