// Runs the warptrace binary (a data dependency) on synthesized saved buffers: good input,
// corrupted input, missing files, wrong sizes, outputs that would replace an input, and bad
// usage.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "nlohmann/json.hpp"
#include "profiler/imports/sidecar.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/profiler/outputs/perfetto/perfetto_packets.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::vector<std::string> err_lines;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The permission bits of `path` (0 when it cannot be examined).
unsigned Mode(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

class WarptraceCliTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kEvents = 2000;  // 5 blocks of 2 units of 200 events

  void SetUp() override {
    absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(kEvents);
    ASSERT_THAT(buffer, IsOk());
    buffer_ = *std::move(buffer);
  }

  std::string Path(const std::string& name) const { return TestTempPath(name); }

  // Saves the fixture buffer as PREFIX.{bin,json} and returns PREFIX.
  std::string Save(const std::string& name) {
    const std::string prefix = Path(name);
    EXPECT_THAT(SaveTrace(prefix, buffer_.layout, buffer_.words), IsOk());
    return prefix;
  }

  RunResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace")};
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<ProgramResult> ran =
        RunProgram(argv, {.timeout = absl::Seconds(60), .merge_stderr = false});
    RunResult r;
    EXPECT_THAT(ran, IsOk());
    if (!ran.ok()) return r;
    r.exit_code = ran->exit_code;
    r.out = std::move(ran->output);
    r.err = std::move(ran->error_output);
    r.err_lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
    return r;
  }

  testing::SyntheticBuffer buffer_;
};

TEST_F(WarptraceCliTest, DumpWritesAValidTraceAReportAndASummary) {
  const std::string prefix = Save("good");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--report=" + Path("verdict.json"), "--summary"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(Path("trace.json")));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  size_t slices = 0;
  for (const auto& e : trace["traceEvents"]) slices += e["ph"] == "X" ? 1 : 0;
  EXPECT_EQ(slices, kEvents / 2);
  EXPECT_EQ(trace["otherData"]["kernel"], "synthetic_gemm");
  EXPECT_EQ(trace["otherData"]["units_complete"], 10);

  const nlohmann::json report = nlohmann::json::parse(ReadFile(Path("verdict.json")));
  EXPECT_EQ(report["ok"], true);
  EXPECT_EQ(report["verdicts"]["complete"], 10);

  EXPECT_THAT(r.out, AllOf(StartsWith("kernel synthetic_gemm on synthetic device"),
                           HasSubstr("calibrated from globaltimer"), HasSubstr("mainloop"),
                           HasSubstr("load"), HasSubstr("mma")));
  EXPECT_THAT(r.err_lines, Contains(StartsWith("warptrace: 10 units (complete 10, ")));
}

// Several inputs are the launches of a program of several kernels: one pipeline trace.
TEST_F(WarptraceCliTest, SeveralInputsAreDumpedAsOnePipelineTrace) {
  const std::string first = Save("first"), second = Save("second");
  const RunResult r = Run({"dump", "--input=" + first + "," + second,
                           "--output=" + Path("pipeline.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(Path("pipeline.json")));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  size_t slices = 0;
  std::set<std::string> processes;
  for (const auto& e : trace["traceEvents"]) {
    slices += e["ph"] == "X" ? 1 : 0;
    if (e["ph"] == "M" && e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      processes.insert(name.substr(0, name.find(':')));
    }
  }
  EXPECT_EQ(slices, 2 * (kEvents / 2));
  EXPECT_EQ(processes, (std::set<std::string>{"launch 1 first", "launch 2 second"}));
  ASSERT_EQ(trace["otherData"]["pipeline"].size(), 2u);
  EXPECT_EQ(trace["otherData"]["pipeline"][0]["otherData"]["kernel"], "synthetic_gemm");
  EXPECT_EQ(Run({"dump", "--input=" + first + "," + second, "--output=" +
                 Path("pipeline.pftrace")}).exit_code, 0);
  const RunResult summary = Run({"dump", "--input=" + first + "," + second, "--summary"});
  EXPECT_EQ(summary.exit_code, 1);
  EXPECT_THAT(summary.err, HasSubstr("give --output=FILE.pftrace or FILE.json only"));
}

TEST_F(WarptraceCliTest, DumpAcceptsTheInputAsPrefixBinOrJson) {
  const std::string prefix = Save("named");
  for (const std::string& input : {prefix, prefix + ".bin", prefix + ".json"}) {
    SCOPED_TRACE(input);
    const RunResult r = Run({"dump", "--input=" + input, "--summary"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, StartsWith("kernel synthetic_gemm on synthetic device"));
  }
}

TEST_F(WarptraceCliTest, BeginEndEventsAndDashedFlagSpellings) {
  const std::string prefix = Save("good");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("be.json"),
                           "--events=be", "--compensate-overhead"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(Path("be.json")));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  size_t b = 0, e = 0, x = 0;
  for (const auto& ev : trace["traceEvents"]) {
    b += ev["ph"] == "B";
    e += ev["ph"] == "E";
    x += ev["ph"] == "X";
  }
  EXPECT_EQ(b, kEvents / 2);
  EXPECT_EQ(e, kEvents / 2);
  EXPECT_EQ(x, 0u);
  EXPECT_EQ(trace["otherData"]["overhead_compensated"], true);
}

// Slice begins of a Perfetto trace, read with our own schema (tests/profiler/outputs/perfetto reads it
// with Perfetto's published one).
size_t PerfettoSliceBegins(const std::string& bytes) {
  size_t begins = 0;
  for (const perfetto::TracePacket& p : ReadPerfettoPackets(bytes)) {
    begins += p.has_track_event() &&
              p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN;
  }
  return begins;
}

TEST_F(WarptraceCliTest, PftraceOutputIsAPerfettoTraceOfEverySlice) {
  const std::string prefix = Save("good");
  for (const char* name : {"trace.pftrace", "trace.perfetto-trace"}) {
    const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path(name)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string bytes = ReadFile(Path(name));
    EXPECT_NE(bytes.front(), '{') << name;
    EXPECT_EQ(PerfettoSliceBegins(bytes), kEvents / 2) << name;
    EXPECT_LE(bytes.size(), 12 * kEvents) << name;
  }
}

TEST_F(WarptraceCliTest, JsonIsLeanByDefaultAndFullOnRequest) {
  const std::string prefix = Save("good");
  RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("lean.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run({"dump", "--input=" + prefix, "--output=" + Path("full.json"), "--json_args=full"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json lean = nlohmann::json::parse(ReadFile(Path("lean.json")));
  const nlohmann::json full = nlohmann::json::parse(ReadFile(Path("full.json")));
  EXPECT_THAT(ChromeTraceViolations(lean), IsEmpty());
  size_t lean_args = 0, full_args = 0;
  for (const auto& e : lean["traceEvents"]) lean_args += e["ph"] == "X" && e.contains("args");
  for (const auto& e : full["traceEvents"]) full_args += e["ph"] == "X" && e.contains("args");
  EXPECT_EQ(lean_args, 0u);
  EXPECT_EQ(full_args, kEvents / 2);
  EXPECT_EQ(lean["otherData"]["sites"], full["otherData"]["sites"]);
  EXPECT_EQ(lean["otherData"]["sites"].size(), buffer_.layout.sites.size());
  EXPECT_LT(ReadFile(Path("lean.json")).size() * 2, ReadFile(Path("full.json")).size());
  r = Run({"dump", "--input=" + prefix, "--output=" + Path("x.json"), "--json_args=some"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err_lines, Contains(AllOf(StartsWith("warptrace: error: "), HasSubstr("'full'"))));
}

TEST_F(WarptraceCliTest, FormatFlagOverridesTheExtension) {
  const std::string prefix = Save("good");
  RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("json.pftrace"),
                     "--format=json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ChromeTraceViolations(nlohmann::json::parse(ReadFile(Path("json.pftrace")))),
              IsEmpty());
  r = Run({"dump", "--input=" + prefix, "--output=" + Path("proto.json"), "--format=perfetto"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(PerfettoSliceBegins(ReadFile(Path("proto.json"))), kEvents / 2);
  r = Run({"dump", "--input=" + prefix, "--output=" + Path("x.json"), "--format=xml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err_lines, Contains(AllOf(StartsWith("warptrace: error: "),
                                          HasSubstr("--format: unknown format 'xml'"), HasSubstr("perfetto"))));
  EXPECT_FALSE(llvm::sys::fs::exists(Path("x.json")));
}

TEST_F(WarptraceCliTest, CorruptedBufferFailsWithOneLinePerProblemAndWritesNoTrace) {
  // Record 2 is block 1, unit 0: its first event gets a site id past the table.
  ASSERT_THAT(testing::InjectCorruption(buffer_.layout,
                                        {testing::Corruption::kUnknownSite, /*record=*/2},
                                        absl::MakeSpan(buffer_.words)),
              IsOk());
  const std::string prefix = Save("corrupt");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--report=" + Path("verdict.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err_lines, Each(StartsWith("warptrace: error: ")));
  EXPECT_THAT(r.err_lines, Contains(AllOf(HasSubstr("block (1,0,0) warpgroup 0"), HasSubstr("site"))));
  EXPECT_THAT(r.err_lines, Contains(HasSubstr("--allow-truncated")));
  EXPECT_FALSE(llvm::sys::fs::exists(Path("trace.json"))) << "a failed dump wrote a trace";
  const nlohmann::json report = nlohmann::json::parse(ReadFile(Path("verdict.json")));
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["verdicts"]["corrupt"], 1);
}

// An output that cannot be written (--report into a missing directory) fails the dump
// before anything is written (issue 55: the trace used to be written, then exit 1).
TEST_F(WarptraceCliTest, AnOutputThatCannotBeWrittenFailsBeforeAnyIsWritten) {
  const std::string prefix = Save("clean");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--report=" + Path("missing-dir/verdict.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err_lines, Contains(AllOf(StartsWith("warptrace: error: "),
                                          HasSubstr("missing-dir/verdict.json"))));
  EXPECT_FALSE(llvm::sys::fs::exists(Path("trace.json"))) << "the trace was written anyway";
}

TEST_F(WarptraceCliTest, AllowTruncatedKeepsTheValidPrefixAndWarns) {
  ASSERT_THAT(testing::InjectCorruption(buffer_.layout,
                                        {testing::Corruption::kUnknownSite, /*record=*/2,
                                         /*event=*/10},
                                        absl::MakeSpan(buffer_.words)),
              IsOk());
  const std::string prefix = Save("corrupt");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--allow-truncated", "--json-args=full"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err_lines, Contains(AllOf(StartsWith("warptrace: warning: "),
                                          HasSubstr("block (1,0,0) warpgroup 0"))));
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(Path("trace.json")));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  bool found = false;
  size_t repaired = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["verdict"] != "complete") {
      found = true;
      // A repaired prefix is a truncated unit (timeline_types.h).
      EXPECT_EQ(e["args"]["name"], "block (1,0,0) warpgroup 0 [truncated]");
    }
    if (e["ph"] == "X" && e["args"].contains("repaired")) {
      ++repaired;
      EXPECT_EQ(e["args"]["block"], "(1,0,0)");
      EXPECT_EQ(e["args"]["verdict"], "truncated");
    }
  }
  EXPECT_TRUE(found) << "the repaired unit is not in the trace with its verdict";
  EXPECT_GE(repaired, 1u) << "regions open at the cut were not closed and marked";
}

TEST_F(WarptraceCliTest, MissingInputIsOneClearLine) {
  const RunResult r =
      Run({"dump", "--input=" + Path("nothing"), "--output=" + Path("trace.json")});
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_THAT(r.err_lines, SizeIs(1)) << r.err;
  EXPECT_THAT(r.err_lines[0], AllOf(StartsWith("warptrace: error: "), HasSubstr("nothing.json")));
}

TEST_F(WarptraceCliTest, BufferOfTheWrongSizeIsRejectedWithBothSizes) {
  const std::string prefix = Save("short");
  const std::string bin = ReadFile(prefix + ".bin");
  {
    std::ofstream out(prefix + ".bin", std::ios::binary | std::ios::trunc);
    out.write(bin.data(), static_cast<std::streamsize>(bin.size() - 8));
  }
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err_lines, Each(StartsWith("warptrace: error: ")));
  EXPECT_THAT(r.err, AllOf(HasSubstr(absl::StrCat(bin.size())),
                           HasSubstr(absl::StrCat(bin.size() - 8))));
  EXPECT_FALSE(llvm::sys::fs::exists(Path("trace.json")));
}

TEST_F(WarptraceCliTest, BadUsageIsReportedWithTheFix) {
  const std::string prefix = Save("good");
  RunResult r = Run({"--input=" + prefix});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("expected the command 'dump'"));
  r = Run({"dump", "--output=" + Path("t.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--input=PREFIX is required"));
  r = Run({"dump", "--input=" + prefix, "--output=" + Path("t.json"), "--events=json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown Chrome event style \"json\"; expected 'x' (complete "
                               "events), 'be' (B/E pairs) or 'mosaic'"));
  r = Run({"dump", "--input=" + prefix});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("nothing to do"));
}

TEST_F(WarptraceCliTest, ThreadsFlagKeepsTheBytesAndRejectsANegativeCount) {
  const std::string prefix = Save("good");
  for (const std::string ext : {".pftrace", ".json"}) {
    std::vector<std::string> outputs;
    for (const std::string threads : {"1", "2", "0"}) {
      outputs.push_back(Path("t" + threads + ext));
      const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + outputs.back(),
                               "--threads=" + threads});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const std::string one = ReadFile(outputs[0]);
    EXPECT_FALSE(one.empty());
    EXPECT_TRUE(ReadFile(outputs[1]) == one) << ext << ": --threads=2 differs from 1";
    EXPECT_TRUE(ReadFile(outputs[2]) == one) << ext << ": --threads=0 differs from 1";
  }
  const RunResult r =
      Run({"dump", "--input=" + prefix, "--output=" + Path("bad.json"), "--threads=-1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--threads must be an integer from 0 to 4096, not -1"));
}

TEST_F(WarptraceCliTest, MosaicBufferUsesTheGivenSmClock) {
  // One warpgroup trace of Mosaic GPU's format: [globaltimer lo, smid, traces_used (event
  // words), (tag, clock) pairs], entries_per_warpgroup 7: region "a" for 1000 cycles.
  const std::string prefix = Path("mosaic");
  {
    std::ofstream json(prefix + ".json");
    json << R"({"format": "mosaic-gpu", "grid": [1], "block": [128],
                "entries_per_warpgroup": 7, "trace_scope": "warpgroup", "names": ["a"]})";
    const uint32_t words[7] = {5000, 3, 4, 0, 100, 0x80000000u, 1100};
    std::ofstream bin(prefix + ".bin", std::ios::binary);
    bin.write(reinterpret_cast<const char*>(words), sizeof(words));
  }
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--summary", "--sm-clock-khz=1000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(Path("trace.json")));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  size_t slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    EXPECT_EQ(e["name"], "a");
    EXPECT_EQ(testing::MicrosToNs(e["dur"]), 1000) << "1000 cycles at 1 GHz";
    EXPECT_EQ(e["pid"], 3);
  }
  EXPECT_EQ(slices, 1u);
  EXPECT_EQ(trace["otherData"]["nominal_sm_clock_khz"], 1000000);
  EXPECT_THAT(r.out, HasSubstr("nominal 1000.0 MHz"));
}

TEST_F(WarptraceCliTest, WrittenFilesAreNotExecutable) {
  const std::string prefix = Save("good");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("trace.json"),
                           "--report=" + Path("verdict.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& file :
       {Path("trace.json"), Path("verdict.json"), prefix + ".bin", prefix + ".json"}) {
    EXPECT_NE(Mode(file), 0u) << file;
    EXPECT_EQ(Mode(file) & 0111, 0u) << file << " is executable: mode " << std::oct << Mode(file);
  }
}

// `dump --input=P --output=P.json` (or any output naming an input) fails and leaves both
// files as they were; it once overwrote its own sidecar and exited 0.
TEST_F(WarptraceCliTest, AnOutputThatNamesAnInputIsRefusedAndTheInputIsUntouched) {
  const std::string prefix = Save("self");
  const std::string sidecar = ReadFile(prefix + ".json");
  const std::string bin = ReadFile(prefix + ".bin");
  const std::vector<std::vector<std::string>> cases = {
      {"--output=" + prefix + ".json"},
      {"--output=" + prefix + ".bin"},
      {"--output=" + Path("trace.json"), "--report=" + prefix + ".json"},
      {"--report=" + prefix + ".bin", "--summary"},
      // Another spelling of the same file.
      {"--output=" + Path("./self.json")},
  };
  for (const std::vector<std::string>& outputs : cases) {
    std::vector<std::string> args = {"dump", "--input=" + prefix};
    args.insert(args.end(), outputs.begin(), outputs.end());
    const RunResult r = Run(args);
    const std::string what = absl::StrJoin(outputs, " ");
    EXPECT_EQ(r.exit_code, 1) << what;
    EXPECT_THAT(r.err_lines, ElementsAre(AllOf(StartsWith("warptrace: error: refusing to write"),
                                               HasSubstr("an output never replaces an input"))))
        << what;
    EXPECT_EQ(ReadFile(prefix + ".json"), sidecar) << what;
    EXPECT_EQ(ReadFile(prefix + ".bin"), bin) << what;
    EXPECT_FALSE(llvm::sys::fs::exists(Path("trace.json"))) << what << ": wrote an output";
  }
}

TEST_F(WarptraceCliTest, TheTraceAndTheReportMustBeDifferentFiles) {
  const std::string prefix = Save("good");
  const RunResult r = Run({"dump", "--input=" + prefix, "--output=" + Path("same.json"),
                           "--report=" + Path("same.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("give each output its own path"));
  EXPECT_FALSE(llvm::sys::fs::exists(Path("same.json")));
}

// --help is a success (it used to exit 1, absl's default, which scripts read as a failure),
// before or after the command, and prints the usage and the flags on stdout.
TEST_F(WarptraceCliTest, HelpDescribesTheCommandAndExitsZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"help"}, {"dump", "--help"},
                                             {"diff", "--help"}, {"whatif", "-help"}}) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args[1] : ""));
    const RunResult r = Run(args);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_THAT(r.out, AllOf(HasSubstr("usage: warptrace dump --input=PREFIX"),
                             HasSubstr("allow_truncated"), HasSubstr("sm_clock_khz")));
  }
}

}  // namespace
}  // namespace warptrace
