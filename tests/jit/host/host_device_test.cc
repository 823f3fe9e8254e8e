#include "jit/host/host_device.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::BlockStatsRun;
using ::warptrace::testing::ExpectBlockStatsOutputs;
using ::warptrace::testing::ExpectBlockStatsRecords;
using ::warptrace::testing::RunBlockStats;
using ::warptrace::testing::RunSimpleKernel;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::kBlockStatsEvents;
using ::warptrace::testing::SimpleKernel;
using ::warptrace::testing::StatusIs;

std::unique_ptr<HostDevice> MakeDevice(const std::string& cache_name,
                                       HostDeviceOptions options = {}) {
  options.cache_directory = TestTempPath(cache_name);
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
  EXPECT_THAT(device, IsOk());
  return device.ok() ? *std::move(device) : nullptr;
}

TEST(HostDeviceTest, RunsAProfiledKernelWithBarriersSharedMemoryShufflesAndAtomics) {
  auto device = MakeDevice("run");
  ASSERT_NE(device, nullptr);
  absl::StatusOr<BlockStatsRun> run = RunBlockStats(*device, 5, kBlockStatsEvents, false);
  ASSERT_THAT(run, IsOk());
  ExpectBlockStatsOutputs(*run, 5);
  ExpectBlockStatsRecords(*run, 5, kBlockStatsEvents, false, device->num_virtual_sms(), true);
}

TEST(HostDeviceTest, StagesEventsInDynamicSharedMemoryWithSharedPlacement) {
  auto device = MakeDevice("shared");
  ASSERT_NE(device, nullptr);
  absl::StatusOr<BlockStatsRun> run = RunBlockStats(*device, 3, kBlockStatsEvents + 2, true);
  ASSERT_THAT(run, IsOk());
  ExpectBlockStatsOutputs(*run, 3);
  ExpectBlockStatsRecords(*run, 3, kBlockStatsEvents + 2, true, device->num_virtual_sms(),
                          true);
}

TEST(HostDeviceTest, ATooSmallCapacityCountsEveryEventAndOverwritesNoNeighbour) {
  HostDeviceOptions options;
  options.num_virtual_sms = 2;
  auto device = MakeDevice("small", options);
  ASSERT_NE(device, nullptr);
  absl::StatusOr<BlockStatsRun> run = RunBlockStats(*device, 3, 5, false);
  ASSERT_THAT(run, IsOk());
  ExpectBlockStatsOutputs(*run, 3);
  ExpectBlockStatsRecords(*run, 3, 5, false, 2, true);
}

TEST(HostDeviceTest, ReportsClockAndName) {
  HostDeviceOptions options;
  options.num_virtual_sms = 7;
  auto device = MakeDevice("name", options);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->Kind(), DeviceKind::kHost);
  EXPECT_EQ(device->Clock().nominal_sm_clock_khz, 1'500'000u);
  EXPECT_EQ(device->Clock().num_sms, 7u);
  EXPECT_THAT(device->Name(), AllOf(HasSubstr("host backend ("), HasSubstr("7 virtual SMs")));
}

// The clock mode comes from HostDeviceOptions::clock, else WARPTRACE_HOST_CLOCK; the name
// says when it is the deterministic one, and a misspelt value is an error, not the default.
TEST(HostDeviceTest, TheClockModeComesFromTheOptionsOrTheEnvironment) {
  setenv("WARPTRACE_HOST_CLOCK", "deterministic", 1);
  auto from_env = MakeDevice("clock_env");
  ASSERT_NE(from_env, nullptr);
  EXPECT_EQ(from_env->clock_mode(), host::ClockMode::kDeterministic);
  EXPECT_THAT(from_env->Name(), HasSubstr(" virtual SMs, deterministic clock)"));
  HostDeviceOptions steady;
  steady.clock = host::ClockMode::kSteady;  // the option wins over the environment
  auto from_option = MakeDevice("clock_option", steady);
  ASSERT_NE(from_option, nullptr);
  EXPECT_EQ(from_option->clock_mode(), host::ClockMode::kSteady);
  EXPECT_THAT(from_option->Name(), Not(HasSubstr("deterministic")));
  setenv("WARPTRACE_HOST_CLOCK", "determinstic", 1);
  HostDeviceOptions options;
  options.cache_directory = TestTempPath("clock_bad");
  EXPECT_THAT(HostDevice::Create(options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("WARPTRACE_HOST_CLOCK=determinstic: use steady (the default) "
                                 "or deterministic")));
  unsetenv("WARPTRACE_HOST_CLOCK");
  auto by_default = MakeDevice("clock_default");
  ASSERT_NE(by_default, nullptr);
  EXPECT_EQ(by_default->clock_mode(), host::ClockMode::kSteady);
}

TEST(HostDeviceTest, WarpShufflesFollowCudaSemanticsInAPartialWarp) {
  auto device = MakeDevice("shuffle");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("shuffles", R"(
  const int t = threadIdx.x;
  out[t] = __shfl_down_sync(0xffffffffu, t, 1);
  out[48 + t] = __shfl_xor_sync(0xffffffffu, t, 1);
  out[96 + t] = __shfl_up_sync(0xffffffffu, t, 2);
  out[144 + t] = __shfl_sync(0xffffffffu, t * 10, 3);
  out[192 + t] = __shfl_down_sync(0xffffffffu, t, 4, 8);
)");
  std::vector<int> got;
  ASSERT_THAT(RunSimpleKernel(*device, source, {1, 1, 1}, {48, 1, 1}, 240, &got), IsOk());
  std::vector<int> want(240);
  for (int t = 0; t < 48; ++t) {
    const int lane = t % 32, base = t - lane, lanes = t < 32 ? 32 : 16;
    want[t] = lane + 1 < lanes ? t + 1 : t;  // past the warp's last lane: own value
    want[48 + t] = t ^ 1;
    want[96 + t] = lane >= 2 ? t - 2 : t;
    want[144 + t] = (base + 3) * 10;
    want[192 + t] = lane % 8 + 4 < 8 ? t + 4 : t;
  }
  EXPECT_THAT(got, ElementsAreArray(want));
}

TEST(HostDeviceTest, AThreadReturningBeforeABarrierIsADeadlockNamingTheBlock) {
  auto device = MakeDevice("deadlock");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("early_return", R"(
  if (blockIdx.x == 1 && threadIdx.x == 3) return;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
)");
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device, source, {3, 1, 1}, {64, 1, 1}, 3 * 64, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("early_return"),
                             HasSubstr("deadlock in block (1,0,0) (linear 1"),
                             HasSubstr("threads 0-2: wait at __syncthreads (barrier 0: 63 of "
                                       "64 threads arrived) at early_return.cc, line 5; thread "
                                       "3: exited; threads 4-63: wait at __syncthreads"))));
  // The device stays usable.
  ASSERT_THAT(RunSimpleKernel(*device, SimpleKernel("fine", "out[threadIdx.x] = 7;"), {1, 1, 1},
                              {64, 1, 1}, 64, &out),
              IsOk());
  EXPECT_THAT(out, Each(7));
}

TEST(HostDeviceTest, ABarrierSomeThreadsExitedWithoutReachingIsCalledDivergent) {
  auto device = MakeDevice("divergent");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("divergent", R"(
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
)");
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device, source, {1, 1, 1}, {32, 1, 1}, 32, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("threads 0-15: wait at __syncthreads (barrier 0: 16 of "
                                       "32 threads arrived) at divergent.cc, line 4; threads "
                                       "16-31: exited"),
                             HasSubstr("barrier 0 is divergent: 16 of its 32 threads never "
                                       "arrive and 16 threads exited without reaching it at "
                                       "divergent.cc, line 4 (a barrier under a condition"))));
}

TEST(HostDeviceTest, LanesOfAWarpInDifferentBarriersAreADeadlock) {
  auto device = MakeDevice("mixed");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("mixed", R"(
  if (threadIdx.x == 0) __syncwarp(); else __syncthreads();
  out[threadIdx.x] = 1;
)");
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device, source, {1, 1, 1}, {64, 1, 1}, 64, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("thread 0: wait at __syncwarp at mixed.cc, line 4 "
                                       "in warp 0 (mask 0xffffffff, lanes 0x00000001 "
                                       "arrived)"),
                             HasSubstr("threads 1-63: wait at __syncthreads (barrier 0: 63 "
                                       "of 64 threads arrived)"))));
}

TEST(HostDeviceTest, ALaunchLongerThanTheTimeoutFailsNamingWhatEachThreadDoes) {
  HostDeviceOptions options;
  options.launch_timeout = absl::Milliseconds(50);
  auto device = MakeDevice("timeout", options);
  ASSERT_NE(device, nullptr);
  // A livelock: thread 0 polls a counter that it keeps changing, so every poll sees a new
  // value (no deadlock), while the others wait at the barrier.
  const KernelSource source = SimpleKernel("livelock", R"(
  if (threadIdx.x == 0) {
    for (;;) out[0] = warptrace_poll(&out[0]) + 1;
  }
  __syncthreads();
)");
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device, source, {1, 1, 1}, {32, 1, 1}, 32, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("ran longer than its limit of 50ms"),
                             HasSubstr("block (0,0,0) (linear 0)"),
                             HasSubstr("thread 0: spin in warptrace_poll"),
                             HasSubstr("threads 1-31: wait at __syncthreads"))));
}

TEST(HostDeviceTest, AnExceptionEscapingKernelCodeIsInternal) {
  auto device = MakeDevice("throw");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("thrower", R"(
  if (threadIdx.x == 5) throw std::runtime_error("boom");
  __syncthreads();
)", "#include <stdexcept>");
  absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel = device->Load(source);
  ASSERT_THAT(kernel, IsOk());
  void* out_ptr = nullptr;
  void* args[] = {&out_ptr};
  EXPECT_THAT(device->Launch(**kernel, {1, 1, 1}, {32, 1, 1}, 0, args),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("thread (5,0,0) threw: boom")));
}

TEST(HostDeviceTest, CompileErrorsCarryTheCompilerOutputAndTheOffendingLine) {
  auto device = MakeDevice("compile_error");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("broken", "  out[0] = not_declared_anywhere;");
  EXPECT_THAT(device->Load(source),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("host compiler failed on kernel broken"),
                             HasSubstr("broken.cc:3:"), HasSubstr("not_declared_anywhere"),
                             HasSubstr("|   out[0] = not_declared_anywhere;"),
                             HasSubstr("compiler output:"))));
}

TEST(HostDeviceTest, ACompileErrorIsPrintedOnceAndItsInputsAreKeptWhereTheMessageSays) {
  auto device = MakeDevice("compile_error_kept");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("kept", "  out[0] = not_declared_anywhere;");
  const absl::Status status = device->Load(source).status();
  ASSERT_TRUE(absl::IsInvalidArgument(status)) << status;
  const std::string message(status.message());
  // Once: the quoted error, not the raw output again.
  size_t count = 0;
  for (size_t at = message.find("'not_declared_anywhere' was not declared");
       at != std::string::npos;
       at = message.find("'not_declared_anywhere' was not declared", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << message;
  const std::string marker = "the source and headers are kept in ";
  const size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  std::string dir = message.substr(at + marker.size());
  dir = dir.substr(0, dir.find('\n'));
  std::ifstream kept(dir + "/kept.cc");
  ASSERT_TRUE(kept.good()) << dir;
  std::stringstream text;
  text << kept.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("not_declared_anywhere"));
  std::ifstream output(dir + "/compiler_output.txt");
  std::stringstream output_text;
  output_text << output.rdbuf();
  EXPECT_THAT(output_text.str(), HasSubstr("not_declared_anywhere"));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("compiler output: ", dir, "/compiler_output.txt")));
}

TEST(HostDeviceTest, AMissingHostEntryIsReportedByName) {
  auto device = MakeDevice("no_entry");
  ASSERT_NE(device, nullptr);
  KernelSource source = SimpleKernel("k", "out[0] = 1;");
  source.host_entry = "warptrace_host_entry_other";
  EXPECT_THAT(device->Load(source), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("`warptrace_host_entry_other`")));
}

// A kernel's extern "C" name may be a function the process already has (curses' raw(),
// terminfo's tputs(), libc's getpid()): the kernel's shared object binds its own symbols to
// itself (it exports only its host entry and ABI version), so the launch runs the kernel.
TEST(HostDeviceTest, AKernelNamedLikeAFunctionOfTheProcessRunsItself) {
  auto device = MakeDevice("interposed_names");
  ASSERT_NE(device, nullptr);
  for (const char* name : {"raw", "tputs", "getpid"}) {
    SCOPED_TRACE(name);
    std::vector<int> out;
    ASSERT_THAT(RunSimpleKernel(*device, SimpleKernel(name, "out[threadIdx.x] = 7 * (int)threadIdx.x;"),
                                {1, 1, 1}, {32, 1, 1}, 32, &out),
                IsOk());
    ASSERT_EQ(out.size(), 32u);
    for (int t = 0; t < 32; ++t) EXPECT_EQ(out[t], 7 * t) << "thread " << t;
  }
}

TEST(HostDeviceTest, TheSharedObjectIsCachedOnDisk) {
  auto device = MakeDevice("cache");
  ASSERT_NE(device, nullptr);
  const KernelSource source = SimpleKernel("cached", "out[0] = 1;");
  ASSERT_THAT(device->Load(source), IsOk());
  ASSERT_THAT(device->Load(source), IsOk());
  EXPECT_EQ(device->stats().compilations, 1u);
  EXPECT_EQ(device->stats().cache_hits, 1u);
  auto fresh = MakeDevice("cache");
  ASSERT_NE(fresh, nullptr);
  ASSERT_THAT(fresh->Load(source), IsOk());
  EXPECT_EQ(fresh->stats().compilations, 0u);
  EXPECT_EQ(fresh->stats().cache_hits, 1u);
}

// Every thread writes from a shared array its warp neighbour filled through a shuffle.
constexpr char kNeighbourBody[] = R"(
  __shared__ int cells[64];
  cells[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x * 3 + (int)blockIdx.x, 1);
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = cells[63 - threadIdx.x] + (int)sqrtf(49.0f);)";

TEST(HostDeviceTest, KernelsRunTheSameWithAndWithoutThePrecompiledHeader) {
  std::vector<int> expected;
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 64; ++t) expected.push_back(((63 - t) ^ 1) * 3 + b + 7);
  }
  for (bool pch : {false, true}) {
    HostDeviceOptions options;
    options.use_precompiled_header = pch;
    auto device = MakeDevice(pch ? "with_pch" : "without_pch", options);
    ASSERT_NE(device, nullptr);
    std::vector<int> out;
    ASSERT_THAT(RunSimpleKernel(*device, SimpleKernel("neighbours", kNeighbourBody), {2, 1, 1},
                                {64, 1, 1}, 128, &out),
                IsOk());
    EXPECT_THAT(out, ElementsAreArray(expected)) << (pch ? "with" : "without") << " the PCH";
    EXPECT_EQ(device->stats().compilations_with_pch, pch ? 1u : 0u);
  }
}

TEST(HostDeviceTest, EveryCompilationOfADeviceUsesOnePrecompiledHeader) {
  auto device = MakeDevice("pch_reuse");
  ASSERT_NE(device, nullptr);
  ASSERT_THAT(device->Load(SimpleKernel("one", "out[0] = 1;")), IsOk());
  ASSERT_THAT(device->Load(SimpleKernel("two", kNeighbourBody)), IsOk());
  EXPECT_EQ(device->stats().compilations, 2u);
  EXPECT_EQ(device->stats().compilations_with_pch, 2u);
  // Built by this device's first compilation, or by an earlier test of this process.
  EXPECT_LE(device->stats().pch_builds, 1u);
  EXPECT_EQ(device->stats().pch_fallbacks, 0u);
}

TEST(HostDeviceTest, WarptraceHostCxxChoosesTheCompiler) {
  ASSERT_EQ(setenv("WARPTRACE_HOST_CXX", "no-such-compiler-xyz", 1), 0);
  HostDeviceOptions options;
  options.cache_directory = TestTempPath("env");
  EXPECT_THAT(HostDevice::Create(options),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("no-such-compiler-xyz"), HasSubstr("WARPTRACE_HOST_CXX"))));
  ASSERT_EQ(unsetenv("WARPTRACE_HOST_CXX"), 0);
}

TEST(HostDeviceTest, CompilesWithClangWhenAskedTo) {
  HostDeviceOptions options;
  options.compiler = "clang++";
  options.cache_directory = TestTempPath("clang");
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
  if (!device.ok() && device.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "no clang++ on PATH: " << device.status();
  }
  ASSERT_THAT(device, IsOk());
  EXPECT_THAT((*device)->Name(), HasSubstr("clang"));
  absl::StatusOr<BlockStatsRun> run = RunBlockStats(**device, 2, kBlockStatsEvents, false);
  ASSERT_THAT(run, IsOk());
  ExpectBlockStatsOutputs(*run, 2);
}

TEST(HostDeviceTest, MemoryOperationsAreBoundsChecked) {
  auto device = MakeDevice("memory");
  ASSERT_NE(device, nullptr);
  EXPECT_THAT(device->Allocate(0), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*device, 100);
  ASSERT_THAT(buffer, IsOk());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->get()) % 256, 0u);
  std::vector<char> host(200, 'x');
  EXPECT_THAT(buffer->CopyFrom(host.data(), 100), IsOk());
  EXPECT_THAT(buffer->CopyFrom(host.data(), 101),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("101 bytes requested")));
  EXPECT_THAT(device->CopyToHost(host.data(), static_cast<char*>(buffer->get()) + 50, 60),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("60 bytes at offset 50 overruns the allocation of 100 bytes")));
  EXPECT_THAT(device->Memset(host.data(), 0, 4),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not in any allocation")));
  EXPECT_THAT(device->Free(static_cast<char*>(buffer->get()) + 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not the start")));
  EXPECT_THAT(buffer->Release(), IsOk());
}

TEST(HostDeviceTest, RejectsOversizedLaunches) {
  auto device = MakeDevice("limits");
  ASSERT_NE(device, nullptr);
  absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel =
      device->Load(SimpleKernel("limits", "out[0] = 1;"));
  ASSERT_THAT(kernel, IsOk());
  void* out_ptr = nullptr;
  void* args[] = {&out_ptr};
  EXPECT_THAT(device->Launch(**kernel, {1, 1, 1}, {1025, 1, 1}, 0, args),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("1025 threads")));
  EXPECT_THAT(device->Launch(**kernel, {1, 1, 1}, {32, 1, 1}, 300 * 1024, args),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("dynamic shared")));
  EXPECT_THAT(device->Launch(**kernel, {0, 1, 1}, {32, 1, 1}, 0, args),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty grid")));
}

}  // namespace
}  // namespace warptrace
