// The emitter's #line directives (jit/emit/emitter.cc), end to end: a builder kernel's
// compile errors, from g++ (the host backend) and from NVRTC, name the builder construct
// and the line within a statement, and quote the generated source line; the host
// backend's deadlock report names the builder path of each barrier.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/run/gpu_compile_check.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::unique_ptr<HostDevice> MakeDevice(const std::string& cache_name) {
  HostDeviceOptions options;
  options.cache_directory = TestTempPath(cache_name);
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
  EXPECT_THAT(device, IsOk());
  return device.ok() ? *std::move(device) : nullptr;
}

Kernel MustBuild(absl::StatusOr<Kernel> kernel) {
  EXPECT_THAT(kernel, IsOk());
  return kernel.ok() ? *std::move(kernel) : Kernel{};
}

// A kernel whose statement in region `mma` has an undeclared name on its second line.
Kernel ErrorOnTheSecondLineOfAStatement(const std::string& name) {
  KernelBuilder b(name);
  b.Param("float*", "out").Block({32, 1, 1});
  b.Stmt("float acc = 0.0f;");
  b.Region("mma", [&] {
    b.Stmt("acc += 1.0f;");
    b.Stmt("acc *= 2.0f;\nacc += undeclared_in_line_two;\nout[threadIdx.x] = acc;");
  });
  return MustBuild(b.Build());
}

std::string StatementPath(const std::string& kernel) {
  return absl::StrCat("kernel ", kernel, " > region mma > statement `acc *= 2.0f; acc += undecla");
}

TEST(LineDirectivesTest, AHostCompileErrorNamesTheBuilderPathAndTheLineInTheStatement) {
  auto device = MakeDevice("line_directives_host");
  ASSERT_NE(device, nullptr);
  const KernelSource source = EmitUnprofiledKernel(ErrorOnTheSecondLineOfAStatement("on_host"));
  const absl::Status status = device->Load(source).status();
  ASSERT_TRUE(absl::IsInvalidArgument(status)) << status;
  const std::string message(status.message());
  // g++: "<path>:2:<col>: error: 'undeclared_in_line_two' was not declared in this scope".
  const std::string path = StatementPath("on_host");
  EXPECT_THAT(message, HasSubstr(path)) << message;
  EXPECT_THAT(message, HasSubstr("`:2:")) << message;
  // Quoted from the kept source with its real line number there.
  EXPECT_THAT(message, HasSubstr(" on_host.cc:")) << message;
  EXPECT_THAT(message, HasSubstr(" |     acc += undeclared_in_line_two;")) << message;
  // Printed once.
  const std::string error = "'undeclared_in_line_two' was not declared";
  const size_t first = message.find(error);
  ASSERT_NE(first, std::string::npos) << message;
  EXPECT_EQ(message.find(error, first + 1), std::string::npos) << message;
}

TEST(LineDirectivesTest, AnNvrtcCompileErrorNamesTheBuilderPathAndTheLineInTheStatement) {
  ProfileOptions options;  // profiled: the recorder's code around it is attributed back
  absl::StatusOr<KernelSource> source =
      EmitKernel(ErrorOnTheSecondLineOfAStatement("on_gpu"), options);
  ASSERT_THAT(source, IsOk());
  const std::string path = StatementPath("on_gpu");
  // NVRTC: "<path>(2): error: identifier "undeclared_in_line_two" is undefined".
  const absl::Status status = CheckCompilesForGpu(*source);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               AllOf(HasSubstr(path), HasSubstr("`(2): error"),
                                     HasSubstr("undeclared_in_line_two"), HasSubstr(" on_gpu.cu:"),
                                     HasSubstr(" |     acc += undeclared_in_line_two;"))));
  // The source NVRTC failed on is kept where the message says.
  const std::string message(status.message());
  const std::string marker = "the source and headers are kept in ";
  const size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  std::string dir = message.substr(at + marker.size());
  dir = dir.substr(0, dir.find('\n'));
  std::ifstream kept(dir + "/on_gpu.cu");
  std::stringstream text;
  text << kept.rdbuf();
  EXPECT_EQ(text.str(), source->source) << dir;
}

TEST(LineDirectivesTest, TheDeadlockReportNamesTheBuilderPathOfADivergentBarrier) {
  auto device = MakeDevice("line_directives_deadlock");
  ASSERT_NE(device, nullptr);
  // Declared block-uniform, which Build() cannot check: half the block takes the branch.
  KernelBuilder b("k");
  b.Param("int*", "out").Block({32, 1, 1});
  b.Region("r", [&] {
    b.If("threadIdx.x < 16", [&] { b.Barrier("b"); }, Uniform::kBlock);
    b.Stmt("(void)out;");
  });
  const KernelSource source = EmitUnprofiledKernel(MustBuild(b.Build()));
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = device->Load(source);
  ASSERT_THAT(loaded, IsOk());
  void* out = nullptr;
  void* args[] = {&out};
  EXPECT_THAT(
      device->Launch(**loaded, {1, 1, 1}, {32, 1, 1}, 0, args),
      StatusIs(absl::StatusCode::kDeadlineExceeded,
               AllOf(HasSubstr("threads 0-15: wait at __syncthreads (barrier 0: 16 of 32 "
                               "threads arrived) at kernel k > region r > if (threadIdx.x < "
                               "16) > barrier b, line 1; threads 16-31: exited"),
                     HasSubstr("barrier 0 is divergent: 16 of its 32 threads never arrive and "
                               "16 threads exited without reaching it at kernel k > region r > "
                               "if (threadIdx.x < 16) > barrier b, line 1 ("))));
}

TEST(LineDirectivesTest, TheDeadlockReportNamesTheLineOfARawBarrierInAStatement) {
  auto device = MakeDevice("line_directives_raw");
  ASSERT_NE(device, nullptr);
  // (Not named `raw`: the host entry would call curses' raw(), which the process has.)
  KernelBuilder b("raw_barrier");
  b.Param("int*", "out").Block({32, 1, 1});
  b.If("threadIdx.x >= 8", [&] { b.Stmt("(void)out;\n__syncthreads();"); },
       Uniform::kBlock);
  const KernelSource source = EmitUnprofiledKernel(MustBuild(b.Build()));
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = device->Load(source);
  ASSERT_THAT(loaded, IsOk());
  void* out = nullptr;
  void* args[] = {&out};
  EXPECT_THAT(device->Launch(**loaded, {1, 1, 1}, {32, 1, 1}, 0, args),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("threads 0-7: exited; threads 8-31: wait at "
                                       "__syncthreads (barrier 0: 24 of 32 threads arrived) at "
                                       "kernel raw_barrier > if (threadIdx.x >= 8) > statement `"),
                             HasSubstr("`, line 2"))));
}

TEST(LineDirectivesTest, TheDeadlockReportNamesTheBuilderPathOfAPhaseWait) {
  auto device = MakeDevice("line_directives_phase");
  ASSERT_NE(device, nullptr);
  // The only arrival is under a condition no thread takes: the phase never completes.
  KernelBuilder b("phase_wait");
  b.Param("int*", "out").Block({64, 1, 1});
  b.PhaseBarriers("full", 1, 64);
  b.If("out == nullptr && threadIdx.x > 64", [&] { b.Arrive("full", "0", "0"); });
  b.Region("consume", [&] { b.WaitPhase("full", "0", "0"); });
  b.Stmt("(void)out;");
  const KernelSource source = EmitUnprofiledKernel(MustBuild(b.Build()));
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = device->Load(source);
  ASSERT_THAT(loaded, IsOk());
  void* out = nullptr;
  void* args[] = {&out};
  EXPECT_THAT(device->Launch(**loaded, {1, 1, 1}, {64, 1, 1}, 0, args),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       HasSubstr("threads 0-63: wait at mbarrier full (shared memory offset "
                                 "0) for the phase of parity 0 to complete (64 of 64 arrivals "
                                 "pending, no transactions outstanding) in mbarrier wait at "
                                 "kernel phase_wait > region consume > wait full[0], line 1")));
}

}  // namespace
}  // namespace warptrace
