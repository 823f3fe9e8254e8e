#include "jit/compile/nvrtc_compiler.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

CompileRequest Request(std::string source) {
  CompileRequest request;
  request.name = "kernel.cu";
  request.source = std::move(source);
  return request;
}

TEST(NvrtcCompilerTest, CompilesKernelWithInMemoryHeaderToCubinAndPtx) {
  CompileRequest request = Request(R"(#include "scale.h"
extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= kScale; }
)");
  request.headers = {{"scale.h", "constexpr float kScale = 2.0f;\n"}};
  NvrtcCompiler compiler;
  absl::StatusOr<CompiledKernel> compiled = compiler.Compile(request);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_EQ(compiled->cubin.substr(1, 3), "ELF");
  EXPECT_THAT(compiled->ptx, HasSubstr(".entry scale"));
  EXPECT_THAT(compiled->ptx, HasSubstr(".target sm_90"));
  EXPECT_EQ(compiled->arch, "sm_90");
  EXPECT_FALSE(compiled->from_cache);
  EXPECT_GT(compiled->compile_time, absl::ZeroDuration());
}

TEST(NvrtcCompilerTest, HonorsTheRequestedArchitecture) {
  CompileRequest request = Request("extern \"C\" __global__ void k() {}\n");
  request.options.target = CudaTarget(8, 0);
  NvrtcCompiler compiler;
  absl::StatusOr<CompiledKernel> compiled = compiler.Compile(request);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_THAT(compiled->ptx, HasSubstr(".target sm_80"));
}

TEST(NvrtcCompilerTest, CompileErrorQuotesTheOffendingSourceLine) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompiledKernel> compiled = compiler.Compile(Request(R"(
extern "C" __global__ void broken(float* x) {
  x[0] = undefined_value + 1.0f;
}
)"));
  EXPECT_THAT(compiled,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(StartsWith("NVRTC error: compiling kernel.cu for sm_90: "
                                        "NVRTC_ERROR_COMPILATION"),
                             HasSubstr("kernel.cu(3): error"),
                             HasSubstr("    3 |   x[0] = undefined_value + 1.0f;"))));
  // Each error once: quoted with its line, not again in the log that follows.
  const std::string message(compiled.status().message());
  const size_t first = message.find("kernel.cu(3): error");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(message.find("kernel.cu(3): error", first + 1), std::string::npos) << message;
}

TEST(NvrtcCompilerTest, CompileErrorInAHeaderQuotesTheHeaderLine) {
  CompileRequest request = Request("#include \"bad.h\"\nextern \"C\" __global__ void k() {}\n");
  request.headers = {{"bad.h", "// first\nint bad = not_declared;\n"}};
  NvrtcCompiler compiler;
  EXPECT_THAT(compiler.Compile(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("bad.h(2): error"),
                             HasSubstr("    2 | int bad = not_declared;"))));
}

TEST(NvrtcCompilerTest, RejectsAnUnknownOptionWithTheOptionsInTheMessage) {
  CompileRequest request = Request("extern \"C\" __global__ void k() {}\n");
  request.options.extra_flags = {"--no-such-nvrtc-flag"};
  NvrtcCompiler compiler;
  EXPECT_THAT(compiler.Compile(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("--no-such-nvrtc-flag")));
}

// A fatal error's log ends "Compilation terminated." with no newline: the note on the kept
// inputs starts a line of its own (it used to read "Compilation terminated.the source ...").
TEST(NvrtcCompilerTest, TheKeptInputsNoteStartsALineAfterALogWithoutANewline) {
  CompileRequest request =
      Request("#include \"no_such_header.h\"\nextern \"C\" __global__ void k() {}\n");
  NvrtcCompiler compiler;
  absl::StatusOr<CompiledKernel> compiled = compiler.Compile(request);
  ASSERT_THAT(compiled, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("the source and headers are kept in")));
  const std::string message(compiled.status().message());
  const size_t note = message.find("the source and headers are kept in");
  ASSERT_GT(note, 0u);
  EXPECT_EQ(message[note - 1], '\n') << message;
}

TEST(NvrtcCompilerTest, VersionNamesNvrtcAndItsVersion) {
  EXPECT_THAT(NvrtcCompiler().Version(), ::testing::MatchesRegex("nvrtc [0-9]+\\.[0-9]+"));
}

}  // namespace
}  // namespace warptrace
