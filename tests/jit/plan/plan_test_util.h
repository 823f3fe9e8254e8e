// Helpers of the record plan's tests (record_plan_test, record_plan_handoff_test).
#ifndef WARPTRACE_TESTS_JIT_PLAN_PLAN_TEST_UTIL_H_
#define WARPTRACE_TESTS_JIT_PLAN_PLAN_TEST_UTIL_H_

#include <utility>

#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {

inline Kernel MustBuild(const KernelBuilder& b) {
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return kernel.ok() ? *kernel : Kernel{};
}

inline RecordPlan MustPlan(const Kernel& kernel, const ProfileOptions& options = {}) {
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(kernel, options);
  EXPECT_THAT(plan, IsOk());
  return std::move(plan).value();
}

// The GEMM shape of the architecture page: k-loop of 64 with two regions, 2 warpgroups.
inline Kernel GemmLike() {
  KernelBuilder b("gemm");
  b.Param("float*", "c").Grid({4, 1, 1}).Block({256, 1, 1});
  b.For("k", 0, "64", TripCount::Exact(64), [&] {
    b.Region("load", [&] { b.Stmt("c[0] = 0;"); });
    b.Barrier("sync");
    b.Region("mma", [&] { b.Stmt("c[1] = 0;"); });
  });
  return MustBuild(b);
}

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_PLAN_PLAN_TEST_UTIL_H_
