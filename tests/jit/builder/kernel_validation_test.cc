// Tests of jit/builder/kernel_validation.h on hand-built trees (the builder's own misuse tests,
// which reach ValidateKernel through Build(), are in kernel_builder_test.cc).
#include "jit/builder/kernel_validation.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

KernelNode Node(KernelNode::Kind kind, std::string path, std::vector<KernelNode> body = {}) {
  KernelNode node;
  node.kind = kind;
  node.path = std::move(path);
  node.text = node.kind == KernelNode::Kind::kStatement ? ";" : "x";
  node.body = std::move(body);
  return node;
}

KernelNode IfElse(std::vector<KernelNode> then_body, std::vector<KernelNode> else_body) {
  KernelNode node = Node(KernelNode::Kind::kIf, "kernel k > if (c)", std::move(then_body));
  node.else_body = std::move(else_body);
  node.has_else = true;
  // Block-uniform, so that a barrier may sit under it and the return checks are what is
  // tested (a barrier under a divergent if is its own error).
  node.uniform = Uniform::kBlock;
  return node;
}

KernelNode Return(const std::string& where) {
  return Node(KernelNode::Kind::kReturn, where + " > return");
}

KernelNode Barrier(const std::string& where) {
  return Node(KernelNode::Kind::kBarrier, where + " > barrier x");
}

Kernel KernelWith(std::vector<KernelNode> body) {
  Kernel kernel;
  kernel.name = "k";
  kernel.grid = {1, 1, 1};
  kernel.block = {128, 1, 1};
  kernel.body = std::move(body);
  return kernel;
}

TEST(ValidateKernelTest, RejectsABarrierInTheOtherBranchOfAnIfThatReturns) {
  const std::string branch = "kernel k > if (c)";
  EXPECT_THAT(ValidateKernel(KernelWith({IfElse({Return(branch)}, {Barrier(branch)})})),
              StatusIs(kInvalid, HasSubstr("kernel k > if (c) > barrier x: may run after the "
                                           "return at kernel k > if (c) > return")));
  EXPECT_THAT(ValidateKernel(KernelWith({IfElse({Barrier(branch)}, {Return(branch)})})),
              StatusIs(kInvalid, HasSubstr("barrier x: may run after the return")));
}

TEST(ValidateKernelTest, AcceptsABarrierBeforeAReturnOnTheSamePath) {
  const std::string branch = "kernel k > if (c)";
  EXPECT_THAT(ValidateKernel(KernelWith({IfElse({Barrier(branch), Return(branch)}, {})})),
              IsOk());
  EXPECT_THAT(ValidateKernel(KernelWith({Barrier("kernel k"), Return("kernel k")})), IsOk());
}

TEST(ValidateKernelTest, NamesTheStatementAndTheLineOfAnUnterminatedComment) {
  KernelNode statement = Node(KernelNode::Kind::kStatement, "kernel k > statement `x`");
  statement.text = "x = 1;\n/* never closed";
  EXPECT_THAT(ValidateKernel(KernelWith({statement})),
              StatusIs(kInvalid, HasSubstr("kernel k > statement `x`: a raw statement has an "
                                           "unterminated block comment starting on line 2")));
}

}  // namespace
}  // namespace warptrace
