#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
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

// ---- Outputs that are not regular files (issue 55) --------------------------------------

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(llvm::sys::path::filename(it->path()).str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A character device (a scratch copy of /dev/null, made where the test may: as root) is
// written in place, as cp would: it stays a device. It used to be replaced by a regular
// file — as root, --output=/dev/null replaced /dev/null itself.
TEST(FileOutputTest, ACharacterDeviceIsWrittenInPlaceNotReplaced) {
  const std::string dev = TestTempPath("null");
  if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod needs CAP_MKNOD (root): " << std::strerror(errno);
  }
  ASSERT_THAT(WriteFileAtomically(dev, "a trace nobody keeps", {.role = "Chrome trace"}), IsOk());
  const struct stat st = StatOf(dev);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device was replaced: mode " << std::oct << st.st_mode;
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_THAT(DirEntries(TestTempPath("")), ::testing::ElementsAre("null"));
}

// A FIFO is written in place, as tee would: its reader gets the bytes and it stays a FIFO.
TEST(FileOutputTest, AFifoIsWrittenInPlaceForItsReader) {
  const std::string fifo = TestTempPath("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::string got;
  std::thread reader([&] {
    FILE* f = std::fopen(fifo.c_str(), "rb");
    if (f == nullptr) return;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) got.append(buf, n);
    std::fclose(f);
  });
  const absl::Status status = WriteFileAtomically(fifo, "through the pipe");
  if (!status.ok()) {  // unblock the reader, which waits for a writer
    FILE* f = std::fopen(fifo.c_str(), "wb");
    if (f != nullptr) std::fclose(f);
  }
  reader.join();
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(StatOf(fifo).st_mode));
}

// A symlink is followed: the file it names gets the new contents (atomically) and the link
// stays a link. It used to be replaced by a regular file.
TEST(FileOutputTest, ASymlinkIsFollowedAndKept) {
  const std::string dir = TestTempPath("");
  WriteFixture(TestTempPath("real.json"), "old");
  ASSERT_EQ(symlink("real.json", TestTempPath("link.json").c_str()), 0);
  ASSERT_THAT(WriteFileAtomically(TestTempPath("link.json"), "new"), IsOk());
  EXPECT_TRUE(S_ISLNK(StatOf(TestTempPath("link.json")).st_mode));
  EXPECT_EQ(Slurp(TestTempPath("real.json")), "new");
  EXPECT_THAT(DirEntries(dir), ::testing::ElementsAre("link.json", "real.json"));
}

TEST(FileOutputTest, ADanglingSymlinkCreatesItsTarget) {
  ASSERT_EQ(symlink("made.json", TestTempPath("link.json").c_str()), 0);
  ASSERT_THAT(WriteFileAtomically(TestTempPath("link.json"), "made"), IsOk());
  EXPECT_TRUE(S_ISLNK(StatOf(TestTempPath("link.json")).st_mode));
  EXPECT_EQ(Slurp(TestTempPath("made.json")), "made");
}

// A pid that is certainly not running: a child that has exited and been waited for.
pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// Named temporaries (WARPTRACE_NO_O_TMPFILE=1, as where the file system has no O_TMPFILE)
// of a process that is gone are removed by the next write of the same output; a live
// process's, another output's and an older version's are left alone.
TEST(FileOutputTest, StaleNamedTemporariesOfTheSameOutputAreSweptOnTheNextWrite) {
  const std::string dir = TestTempPath("");
  const std::string dead = absl::StrCat("out.json.tmp-", DeadPid(), "-abc123");
  const std::string alive = absl::StrCat("out.json.tmp-", getpid(), "-def456");
  const std::string other = absl::StrCat("other.json.tmp-", DeadPid(), "-abc123");
  const std::string legacy = "out.json.tmp-a1b2c3";
  for (const std::string& name : {dead, alive, other, legacy}) WriteFixture(dir + name, "x");
  ASSERT_EQ(setenv("WARPTRACE_NO_O_TMPFILE", "1", 1), 0);
  const absl::Status status = WriteFileAtomically(dir + "out.json", "fresh");
  unsetenv("WARPTRACE_NO_O_TMPFILE");
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(Slurp(dir + "out.json"), "fresh");
  EXPECT_THAT(DirEntries(dir), ::testing::UnorderedElementsAre("out.json", alive, other, legacy));
}

// Where O_TMPFILE works, the temporary has no name while it is written: a process killed
// mid-write (its descriptor closed by the kernel) leaves nothing in the directory.
TEST(FileOutputTest, WhileWritingTheTemporaryHasNoNameInTheDirectory) {
  const std::string dir = TestTempPath("");
  const int probe = open(dir.c_str(), O_TMPFILE | O_WRONLY, 0600);
  if (probe < 0) GTEST_SKIP() << "no O_TMPFILE here (the sweep test covers this case)";
  close(probe);
  std::vector<std::string> during;
  ASSERT_THAT(WriteFileAtomically(dir + "out.json",
                                  [&](llvm::raw_ostream& os) {
                                    os << "partial";
                                    during = DirEntries(dir);
                                    return absl::OkStatus();
                                  }),
              IsOk());
  EXPECT_THAT(during, ::testing::IsEmpty()) << "a named temporary, which a kill would leave";
  EXPECT_THAT(DirEntries(dir), ::testing::ElementsAre("out.json"));
}

}  // namespace
}  // namespace warptrace
