#include "tests/jit/nvrtc_batch.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSm90[] = "sm_90";

// A kernel `name` that includes "scale.cuh" (kScale) and runs `body`.
NvrtcBatchMember Member(const std::string& name, const std::string& body) {
  return {absl::StrCat("member ", name),
          absl::StrCat("#include \"scale.cuh\"\n", "extern \"C\" __global__ void ", name,
                       "(float* x) {\n", body, "\n}\n"),
          name,
          {{"scale.cuh", "#ifndef SCALE_CUH_\n#define SCALE_CUH_\n"
                         "constexpr float kScale = 2.0f;\n#endif\n"}}};
}

TEST(NvrtcBatchTest, MembersShareAProgramAndEachGetsOnlyItsOwnEntry) {
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
      {Member("scale", "x[threadIdx.x] *= kScale;"),
       Member("stamp", "unsigned long long t;\n"
                       "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
                       "x[0] = static_cast<float>(t);")},
      kSm90);
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), 2u);
  const NvrtcBatchResult& scale = (*results)[0];
  const NvrtcBatchResult& stamp = (*results)[1];
  EXPECT_EQ(scale.label, "member scale");
  EXPECT_EQ(scale.entry, "scale_batch0");
  EXPECT_EQ(stamp.entry, "stamp_batch1");
  for (const NvrtcBatchResult& r : *results) {
    EXPECT_THAT(r.status, IsOk());
    EXPECT_EQ(r.log, "");
    EXPECT_EQ(r.batch_log, "");
    EXPECT_THAT(r.ptx, HasSubstr(".target sm_90"));
    EXPECT_THAT(r.ptx, HasSubstr(".entry " + r.entry + "("));
  }
  EXPECT_THAT(stamp.ptx, HasSubstr("%globaltimer"));
  EXPECT_THAT(scale.ptx, Not(HasSubstr("%globaltimer")));
  EXPECT_THAT(scale.ptx, Not(HasSubstr("stamp")));
  EXPECT_FALSE(scale.cubin.empty());
  EXPECT_EQ(scale.cubin, stamp.cubin);  // one program
}

TEST(NvrtcBatchTest, AnIdenticalSourceIsCompiledOnceUnderEachLabel) {
  NvrtcBatchMember again = Member("scale", "x[threadIdx.x] *= kScale;");
  again.label = "again";
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches({Member("scale", "x[threadIdx.x] *= kScale;"), again}, kSm90);
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), 2u);
  // One member left: compiled alone, under its own kernel name.
  EXPECT_EQ((*results)[0].entry, "scale");
  EXPECT_EQ((*results)[1].entry, "scale");
  EXPECT_EQ((*results)[1].label, "again");
  EXPECT_EQ((*results)[0].ptx, (*results)[1].ptx);
}

TEST(NvrtcBatchTest, AMemberNeverSeesAHeaderItDoesNotInclude) {
  NvrtcBatchMember without = Member("bare", "x[0] = kScale;");
  without.source = "extern \"C\" __global__ void bare(float* x) { x[0] = kScale; }\n";
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
      {Member("scale", "x[threadIdx.x] *= kScale;"), without}, kSm90);
  ASSERT_THAT(results, IsOk());
  EXPECT_THAT((*results)[0].status, IsOk());
  EXPECT_THAT((*results)[1].status, StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("kScale")));
}

TEST(NvrtcBatchTest, AMemberWithCodeBeforeAnIncludeIsCompiledAlone) {
  // Batched, "scale.cuh" would come first and see no SCALE_OVERRIDE.
  NvrtcBatchMember late = Member("late", "x[0] = kScale;");
  late.source = "#define SCALE_OVERRIDE 3.0f\n" + late.source;
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
      {Member("scale", "x[threadIdx.x] *= kScale;"), late, Member("next", "x[1] = kScale;")},
      kSm90);
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].entry, "scale_batch0");
  EXPECT_EQ((*results)[1].entry, "late");  // its own program, its own name
  EXPECT_EQ((*results)[2].entry, "next_batch1");
  for (const NvrtcBatchResult& r : *results) EXPECT_THAT(r.status, IsOk()) << r.label;
}

TEST(NvrtcBatchTest, AWarningIsReportedForItsMemberAlone) {
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
      {Member("first", "x[0] = kScale;"), Member("noisy", "int unused = 1;\nx[0] = kScale;"),
       Member("third", "x[1] = kScale;")},
      kSm90);
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), 3u);
  EXPECT_THAT((*results)[1].status, IsOk());
  EXPECT_THAT((*results)[1].log, HasSubstr("unused"));
  EXPECT_EQ((*results)[1].entry, "noisy");  // compiled alone
  for (int i : {0, 2}) {
    EXPECT_THAT((*results)[i].status, IsOk());
    EXPECT_EQ((*results)[i].log, "");
    EXPECT_EQ((*results)[i].batch_log, "");
  }
}

TEST(NvrtcBatchTest, AFailingMemberCarriesItsOwnErrorAndLog) {
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
      {Member("good", "x[0] = kScale;"), Member("broken", "x[0] = undeclared_name;")}, kSm90);
  ASSERT_THAT(results, IsOk());
  EXPECT_THAT((*results)[0].status, IsOk());
  EXPECT_EQ((*results)[0].batch_log, "");
  EXPECT_THAT((*results)[1].status, StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("undeclared_name")));
  EXPECT_THAT((*results)[1].status.message(), HasSubstr("broken.cu"));
}

TEST(NvrtcBatchTest, RejectsAMemberWithoutItsKernel) {
  NvrtcBatchMember member = Member("scale", "");
  member.kernel_name = "missing";
  EXPECT_THAT(CompileNvrtcBatches({member}, kSm90),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing")));
}

TEST(NvrtcBatchTest, PtxOfEntryKeepsTheModuleDirectivesAndOneEntry) {
  const std::string ptx =
      "//\n// Generated\n.version 9.0\n.target sm_90\n.address_size 64\n\n"
      "\t// .globl\ta_batch1\n"
      ".visible .entry a_batch1(\n\t.param .u64 p\n)\n{\n\t{\n\tret;\n\t}\n}\n"
      "\t// .globl\ta_batch10\n.visible .entry a_batch10(\n)\n{\n\tbar.sync 0;\n}\n";
  EXPECT_EQ(PtxOfEntry(ptx, "a_batch1"),
            ".version 9.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry a_batch1(\n\t.param .u64 p\n)\n{\n\t{\n\tret;\n\t}\n}\n");
  EXPECT_EQ(PtxOfEntry(ptx, "a_batch10"),
            ".version 9.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry a_batch10(\n)\n{\n\tbar.sync 0;\n}\n");
  EXPECT_EQ(PtxOfEntry(ptx, "a_batch2"), "");
}

}  // namespace
}  // namespace warptrace::testing
