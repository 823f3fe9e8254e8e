#include "base/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

// Writes `contents` with the plain POSIX calls, so a test's fixture is not an input.
void WriteFixture(const std::string& path, const std::string& contents) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(contents.data(), 1, contents.size(), f), contents.size());
  ASSERT_EQ(std::fclose(f), 0);
}

std::string Slurp(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "<missing>";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

TEST(FileTest, WriteThenReadRoundTripsBinaryContents) {
  const std::string path = TestTempPath("blob");
  const std::string contents("a\0b\xff\n", 5);
  ASSERT_THAT(WriteFileAtomically(path, contents), IsOk());
  EXPECT_THAT(ReadFile(path, {.register_as_input = false}), IsOkAndHolds(contents));
}

TEST(FileTest, WrittenFilesAreNeverExecutable) {
  const mode_t old_umask = umask(022);
  const std::string text = TestTempPath("text.json");
  const std::string streamed = TestTempPath("streamed.json");
  ASSERT_THAT(WriteFileAtomically(text, "{}"), IsOk());
  ASSERT_THAT(WriteFileAtomically(streamed,
                                  [](llvm::raw_ostream& os) {
                                    os << "[]";
                                    return absl::OkStatus();
                                  }),
              IsOk());
  umask(old_umask);
  EXPECT_EQ(ModeOf(text), 0644u);
  EXPECT_EQ(ModeOf(streamed), 0644u);
}

TEST(FileTest, OverwritingAnExecutableFileLeavesADataFile) {
  const mode_t old_umask = umask(022);
  const std::string path = TestTempPath("was_executable");
  WriteFixture(path, "old");
  ASSERT_EQ(chmod(path.c_str(), 0755), 0);
  ASSERT_THAT(WriteFileAtomically(path, "new"), IsOk());
  umask(old_umask);
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_EQ(ModeOf(path), 0644u);
}

TEST(FileTest, RefusesToWriteOverAFileThisProcessRead) {
  const std::string input = TestTempPath("p.json");
  WriteFixture(input, "input contents");
  ASSERT_THAT(ReadFile(input, {.role = "trace sidecar"}), IsOkAndHolds("input contents"));
  EXPECT_THAT(WriteFileAtomically(input, "clobbered", {.role = "Chrome trace"}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("Chrome trace"), HasSubstr("trace sidecar"),
                             HasSubstr(input))));
  EXPECT_THAT(CheckNotAnInput(input, "verdict report"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("verdict report")));
  EXPECT_EQ(Slurp(input), "input contents");
}

TEST(FileTest, RecognizesAnInputThroughAnotherSpellingASymlinkAndAHardLink) {
  const std::string input = TestTempPath("original.bin");
  WriteFixture(input, "words");
  ASSERT_THAT(MapFile(input, {.role = "trace buffer"}), IsOk());
  const std::string dotted = absl::StrCat(TestTempPath(""), "./original.bin");
  const std::string symlink = TestTempPath("symlink.bin");
  const std::string hardlink = TestTempPath("hardlink.bin");
  ASSERT_EQ(::symlink(input.c_str(), symlink.c_str()), 0);
  ASSERT_EQ(::link(input.c_str(), hardlink.c_str()), 0);
  for (const std::string& alias : {dotted, symlink, hardlink}) {
    EXPECT_THAT(WriteFileAtomically(alias, "clobbered"),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("trace buffer")))
        << alias;
  }
  EXPECT_EQ(Slurp(input), "words");
}

TEST(FileTest, RegisterInputProtectsAFileReadSomeOtherWay) {
  const std::string input = TestTempPath("registered");
  WriteFixture(input, "x");
  ASSERT_THAT(RegisterInput(input, "kernel source"), IsOk());
  EXPECT_THAT(WriteFileAtomically(input, "y"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("kernel source")));
  EXPECT_THAT(RegisterInput(TestTempPath("absent"), "kernel source"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("absent")));
}

TEST(FileTest, AScratchReadDoesNotProtectTheFile) {
  const std::string path = TestTempPath("cache_entry");
  WriteFixture(path, "old");
  ASSERT_THAT(ReadFile(path, {.register_as_input = false}), IsOkAndHolds("old"));
  EXPECT_THAT(WriteFileAtomically(path, "new"), IsOk());
  EXPECT_EQ(Slurp(path), "new");
}

TEST(FileTest, AFailingWriterLeavesTheTargetAndNoTemporaryBehind) {
  const std::string path = TestTempPath("kept");
  WriteFixture(path, "before");
  const absl::Status status = WriteFileAtomically(path, [](llvm::raw_ostream& os) {
    os << "half";
    return absl::DataLossError("the writer gave up");
  });
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, "the writer gave up"));
  EXPECT_EQ(Slurp(path), "before");
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(TestTempPath(""), ec), end; !ec && it != end;
       it.increment(ec)) {
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FileTest, LargeFileWriterStreamsThroughALargeBufferAndCommitsOnlyOnSuccess) {
  const std::string path = TestTempPath("large.bin");
  size_t buffer = 0;
  const std::string chunk(4096, 'x');
  ASSERT_THAT(WriteLargeFileAtomically(path,
                                       [&](llvm::raw_ostream& os) {
                                         buffer = os.GetBufferSize();
                                         for (int i = 0; i < 300; ++i) os << chunk;
                                         return absl::OkStatus();
                                       },
                                       {.role = "trace"}),
              IsOk());
  EXPECT_EQ(buffer, kLargeFileBufferBytes);
  EXPECT_EQ(Slurp(path).size(), 300 * chunk.size());
  EXPECT_EQ(ModeOf(path) & 0111, 0u);
  const absl::Status failed = WriteLargeFileAtomically(path, [&](llvm::raw_ostream& os) {
    os << "partial";
    return absl::InternalError("stopped early");
  });
  EXPECT_THAT(failed, StatusIs(absl::StatusCode::kInternal, "stopped early"));
  EXPECT_EQ(Slurp(path).size(), 300 * chunk.size());
}

// Past several writeback steps (WritebackOStream starts the kernel's writeback every 8 MiB),
// in pieces of odd sizes, one bigger than the buffer, and over an existing file.
TEST(FileTest, LargeFileWriterKeepsEveryByteAcrossWritebackSteps) {
  const std::string path = TestTempPath("writeback.bin");
  ASSERT_THAT(WriteFileAtomically(path, std::string(5'000'000, 'o')), IsOk());
  std::string expected;
  ASSERT_THAT(WriteLargeFileAtomically(path,
                                       [&](llvm::raw_ostream& os) {
                                         for (int i = 0; expected.size() < 30'000'000; ++i) {
                                           const std::string piece =
                                               i % 1000 == 999
                                                   ? std::string(3'000'001, 'b')
                                                   : std::to_string(i) + std::string(i % 97, '.');
                                           os << piece;
                                           expected += piece;
                                         }
                                         EXPECT_EQ(os.tell(), expected.size());
                                         return absl::OkStatus();
                                       },
                                       {.role = "trace"}),
              IsOk());
  const std::string written = Slurp(path);
  ASSERT_EQ(written.size(), expected.size());
  EXPECT_TRUE(written == expected);
}

TEST(FileTest, ReportsTheFileSystemsCodeWithRoleAndPath) {
  EXPECT_THAT(ReadFile(TestTempPath("missing.json"), {.role = "trace sidecar"}),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("reading trace sidecar"), HasSubstr("missing.json"))));
  EXPECT_THAT(WriteFileAtomically("/nonexistent-dir/verdict.json", "{}",
                                  {.role = "verdict report"}),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("writing verdict report"),
                             HasSubstr("/nonexistent-dir/verdict.json"))));
  EXPECT_THAT(ReadFile(TestTempPath("")), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace warptrace
