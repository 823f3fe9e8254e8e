// GroupBounds: the most of one site's async groups in flight at each wait, on kernels
// built with the KernelBuilder (cp.async copies and their waits).
#include "jit/emit/group_bounds.h"

#include <functional>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

// The nodes of `kind` in `body`, in program order.
std::vector<const KernelNode*> NodesOf(const std::vector<KernelNode>& body,
                                       KernelNode::Kind kind) {
  std::vector<const KernelNode*> out;
  std::function<void(const std::vector<KernelNode>&)> walk =
      [&](const std::vector<KernelNode>& nodes) {
        for (const KernelNode& n : nodes) {
          if (n.kind == kind) out.push_back(&n);
          walk(n.body);
          walk(n.else_body);
          for (const KernelNode& role : n.roles) walk(role.body);
        }
      };
  walk(body);
  return out;
}

// A block of 128 threads copying `tile` rows of `in` with cp.async; `body` adds the copies
// (Copy()) and waits.
class GroupBoundsTest : public ::testing::Test {
 protected:
  GroupBoundsTest() : b_("k") {
    b_.Param("const float*", "in").Grid({1, 1, 1}).Block({128, 1, 1});
    b_.SharedArray("float", "tile", 256);
  }
  void Copy() {
    AsyncCopySpec spec;
    spec.name = "tile copy";
    spec.dst = "tile";
    spec.src = "in";
    spec.rows = 2;
    spec.row_bytes = 128;
    spec.src_row_stride_bytes = "128";
    b_.AsyncCopy(spec);
  }
  // The bound of the `copy`-th copy (program order) at the `wait`-th wait.
  std::optional<uint32_t> Bound(size_t copy, size_t wait) { return Get(copy, wait, false); }
  // Its exact count there (GroupBounds::ExactlyAtWait).
  std::optional<uint32_t> Exactly(size_t copy, size_t wait) { return Get(copy, wait, true); }
  // GroupBounds::ExactEverywhere of the `copy`-th copy.
  bool ExactEverywhere(size_t copy) {
    if (!Built()) return false;
    const std::vector<const KernelNode*> copies =
        NodesOf(kernel_.body, KernelNode::Kind::kAsyncCopy);
    EXPECT_LT(copy, copies.size());
    if (copy >= copies.size()) return false;
    return GroupBounds(kernel_.body, copies[copy], KernelNode::Kind::kAsyncWait)
        .ExactEverywhere();
  }
  bool Built() {
    absl::StatusOr<Kernel> kernel = b_.Build();
    EXPECT_THAT(kernel, IsOk());
    if (!kernel.ok()) return false;
    kernel_ = *std::move(kernel);
    return true;
  }
  std::optional<uint32_t> Get(size_t copy, size_t wait, bool exactly) {
    if (!Built()) return 0u;
    const std::vector<const KernelNode*> copies =
        NodesOf(kernel_.body, KernelNode::Kind::kAsyncCopy);
    const std::vector<const KernelNode*> waits =
        NodesOf(kernel_.body, KernelNode::Kind::kAsyncWait);
    EXPECT_LT(copy, copies.size());
    EXPECT_LT(wait, waits.size());
    if (copy >= copies.size() || wait >= waits.size()) return 0u;
    const GroupBounds bounds(kernel_.body, copies[copy], KernelNode::Kind::kAsyncWait);
    return exactly ? bounds.ExactlyAtWait(waits[wait]) : bounds.AtWait(waits[wait]);
  }
  KernelBuilder b_;
  Kernel kernel_;
};

TEST_F(GroupBoundsTest, ALoopThatCommitsAndWaitsAllHasOneInFlightAtItsWait) {
  b_.For("k", 0, 8, TripCount::Exact(8), [&] {
    Copy();
    b_.WaitAsyncCopies(0);
  });
  EXPECT_EQ(Bound(0, 0), 1u);
}

TEST_F(GroupBoundsTest, AWaitLeavingOneInFlightSeesTwoFromTheSecondIterationOn) {
  b_.For("k", 0, 8, TripCount::Exact(8), [&] {
    Copy();
    b_.WaitAsyncCopies(1);
  });
  b_.WaitAsyncCopies(0);
  EXPECT_EQ(Bound(0, 0), 2u);
  EXPECT_EQ(Bound(0, 1), 1u);  // after the loop: what the loop's wait left
}

TEST_F(GroupBoundsTest, ALoopThatCommitsWithoutWaitingHasNoBound) {
  b_.For("k", 0, 8, TripCount::Exact(8), [&] { Copy(); });
  b_.WaitAsyncCopies(0);
  EXPECT_EQ(Bound(0, 0), std::nullopt);
}

TEST_F(GroupBoundsTest, AnIfTakesItsLargerSideAndOtherSitesDoNotCount) {
  Copy();  // the site: node 0
  b_.If("threadIdx.x < 64", [&] { Copy(); }, [&] {
    Copy();
    Copy();
  });
  b_.WaitAsyncCopies(0);
  EXPECT_EQ(Bound(0, 0), 1u);
}

TEST_F(GroupBoundsTest, AWaitLeavingMoreThanTheLimitInFlightHasNoBound) {
  // 1, 2, ... groups in flight at the wait: past kMaxBound, the wait keeps its loop.
  b_.For("k", 0, 8, TripCount::Exact(8), [&] {
    Copy();
    b_.WaitAsyncCopies(GroupBounds::kMaxBound);
  });
  EXPECT_EQ(Bound(0, 0), std::nullopt);
}

TEST_F(GroupBoundsTest, ALoopThatCommitsAndWaitsAllIsExactEverywhere) {
  b_.For("k", 0, 8, TripCount::Exact(8), [&] {
    Copy();
    b_.WaitAsyncCopies(0);
  });
  EXPECT_EQ(Exactly(0, 0), 1u);
  EXPECT_TRUE(ExactEverywhere(0));
}

TEST_F(GroupBoundsTest, ACommitOnOneSideOfAnIfIsNotExact) {
  b_.If("threadIdx.x < 64", [&] { Copy(); });
  b_.WaitAsyncCopies(0);
  EXPECT_EQ(Bound(0, 0), 1u);
  EXPECT_EQ(Exactly(0, 0), std::nullopt);
  EXPECT_FALSE(ExactEverywhere(0));
}

TEST_F(GroupBoundsTest, AWaitLeavingGroupsInFlightIsNotExact) {
  b_.For("k", 0, 8, TripCount::Exact(8), [&] {
    Copy();
    b_.WaitAsyncCopies(1);
  });
  b_.WaitAsyncCopies(0);
  EXPECT_EQ(Exactly(0, 0), std::nullopt);  // 1 in the first iteration, 2 after
  EXPECT_FALSE(ExactEverywhere(0));
}

TEST_F(GroupBoundsTest, GroupsLeftInFlightAtTheEndAreNotExactEverywhere) {
  Copy();
  b_.If("threadIdx.x < 64", [&] { b_.WaitAsyncCopies(0); });
  EXPECT_EQ(Exactly(0, 0), 1u);
  EXPECT_FALSE(ExactEverywhere(0));  // the other threads end with it in flight
}

}  // namespace
}  // namespace warptrace
