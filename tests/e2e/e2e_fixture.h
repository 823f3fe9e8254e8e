// The end-to-end suite's fixture (run_test.cc, random_trees_test.cc: one binary per device,
// tests/e2e/BUILD): the device the binary is built for, opened once per suite, and a run
// checked against the plan's exact per-unit counts.
#ifndef WARPTRACE_TESTS_E2E_E2E_FIXTURE_H_
#define WARPTRACE_TESTS_E2E_E2E_FIXTURE_H_

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "base/testing/temp_path.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/cuda/cuda_device.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "jit/plan/record_plan.h"
#include "jit/run/device_select.h"
#include "jit/run/run.h"
#include "profiler/dump/collector.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/links.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/status_matchers.h"

#ifndef WARPTRACE_E2E_DEVICE
#define WARPTRACE_E2E_DEVICE host
#endif
#define WARPTRACE_STR_INNER(x) #x
#define WARPTRACE_STR(x) WARPTRACE_STR_INNER(x)

namespace warptrace::testing {

class E2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Keep compiled kernels inside the test's sandbox.
    setenv("WARPTRACE_CACHE_DIR", TestTempPath("warptrace_cache").c_str(), 0);
    absl::StatusOr<DeviceChoice> choice = ParseDeviceChoice(WARPTRACE_STR(WARPTRACE_E2E_DEVICE));
    ASSERT_TRUE(choice.ok()) << choice.status();
    absl::StatusOr<SelectedDevice> selected = SelectDevice(*choice);
    if (!selected.ok()) {
      // The host suite never skips; the GPU suite skips only where there is no driver. A
      // device that fails to open anywhere else fails every test, loudly.
      std::optional<std::string> no_driver;
      if (*choice == DeviceChoice::kCuda) no_driver = ::warptrace::testing::NoCudaDriver();
      *(no_driver.has_value() ? skip_reason_ : failure_) = no_driver.value_or(absl::StrCat(
          "cannot create the ", DeviceChoiceName(*choice), " device: ",
          selected.status().ToString()));
      return;
    }
    device_ = selected->device.release();
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }
  void SetUp() override {
    if (!failure_->empty()) GTEST_FAIL() << *failure_;
    if (device_ == nullptr) GTEST_SKIP() << *skip_reason_;  // "no CUDA driver: ..."
  }

  // Runs and checks that each unit of each recorded block recorded exactly the plan's
  // prediction and that the trace verifies.
  static RunResult RunAndCheckExact(const Kernel& kernel, absl::Span<const KernelArg> args,
                                    const RunOptions& options) {
    absl::StatusOr<RunResult> run = RunKernel(*device_, kernel, args, options);
    EXPECT_THAT(run.status(), IsOk());
    if (!run.ok()) return RunResult{};
    EXPECT_NE(run->trace, nullptr);
    if (run->trace == nullptr) return std::move(*run);
    const Trace& trace = *run->trace;
    EXPECT_TRUE(trace.report.ok());
    EXPECT_EQ(trace.report.dropped_events, 0u);
    EXPECT_EQ(trace.decoded.records.size(), NumRecords(trace.layout));
    for (const DecodedRecord& record : trace.decoded.records) {
      absl::StatusOr<uint64_t> expected =
          run->plan->ExactEventsForBlockUnit(record.block_linear, record.unit_index);
      EXPECT_THAT(expected.status(), IsOk());
      if (!expected.ok()) continue;
      EXPECT_EQ(record.attempted, *expected)
          << "block " << record.block_linear << " unit " << record.unit_index;
      EXPECT_EQ(record.events.size(), *expected);
      EXPECT_TRUE(record.complete());
    }
    for (const UnitVerdict& verdict : trace.report.units) {
      EXPECT_EQ(verdict.verdict, Verdict::kComplete) << verdict.reason;
    }
    EXPECT_TRUE(trace.has_timeline);
    return std::move(*run);
  }

  static inline Device* device_ = nullptr;
  static inline std::string* skip_reason_ = new std::string;
  static inline std::string* failure_ = new std::string;
};


}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_E2E_E2E_FIXTURE_H_
