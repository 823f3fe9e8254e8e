// RunOptions::artifacts_dir: RunKernel keeps what NVRTC makes of the kernel as launched (the
// .cu, NVRTC's log with ptxas's report, the PTX, a plain cubin and its SASS), profiled and
// unprofiled, on the host backend (no GPU).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/cost/recorder_cost.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

Kernel Scale() {
  KernelBuilder b("scale");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({64, 1, 1});
  b.Region("write", [&] { b.Stmt("out[threadIdx.x] = 2.0f * threadIdx.x;"); });
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class ArtifactsDirTest : public testing::HostRunTest {
 protected:
  absl::Status Run(bool profile, const std::string& dir) {
    RunOptions options;
    options.profile.enabled = profile;
    options.artifacts_dir = dir;
    const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out_))};
    return RunKernel(device(), Scale(), args, options).status();
  }
  std::vector<float> out_ = std::vector<float>(64, 0.0f);
};

TEST_F(ArtifactsDirTest, KeepsTheSourceLogPtxPlainCubinAndSassOfEachMode) {
  ASSERT_THAT(LocateCuobjdump("").status(), IsOk()) << "tools/setup.sh installs cuobjdump";
  const std::string dir = TestTempPath("artifacts") + "/kept";  // created by RunKernel
  ASSERT_THAT(Run(/*profile=*/false, dir), IsOk());
  ASSERT_THAT(Run(/*profile=*/true, dir), IsOk());
  for (const char* mode : {"off", "on"}) {
    SCOPED_TRACE(mode);
    const std::string stem = absl::StrCat(dir, "/scale.", mode);
    absl::StatusOr<std::string> cu = ReadFile(stem + ".cu");
    ASSERT_THAT(cu, IsOk());
    EXPECT_THAT(*cu, HasSubstr("void scale("));
    absl::StatusOr<std::string> log = ReadFile(stem + ".log");
    ASSERT_THAT(log, IsOk());
    EXPECT_THAT(*log, HasSubstr("Used"));  // ptxas's register report
    absl::StatusOr<std::string> cubin = ReadFile(stem + ".cubin");
    ASSERT_THAT(cubin, IsOk());
    EXPECT_EQ(cubin->substr(0, 4), "\x7f" "ELF");  // no cache header: cuobjdump reads it
    absl::StatusOr<std::string> sass = ReadFile(stem + ".sass");
    ASSERT_THAT(sass, IsOk());
    EXPECT_THAT(*sass, HasSubstr("Function : scale"));
    EXPECT_THAT(ReadFile(stem + ".ptx"), IsOk());
  }
  EXPECT_THAT(ReadFile(dir + "/recorder.cuh"), IsOk());  // the profiled source's header
}

TEST_F(ArtifactsDirTest, ADirectoryThatCannotBeMadeFailsTheRunNamingIt) {
  const std::string file = TestTempPath("artifacts_file");
  ASSERT_THAT(WriteFileAtomically(file, "x"), IsOk());
  const absl::Status status = Run(/*profile=*/false, file + "/sub");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("keeping the artifacts of kernel scale (RunOptions::artifacts_dir): "
                        "creating the kernel artifacts directory " + file + "/sub"));
}

}  // namespace
}  // namespace warptrace
