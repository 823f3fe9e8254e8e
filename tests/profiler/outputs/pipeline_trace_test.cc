// One timeline of a program of several kernels (profiler/outputs/pipeline_trace.h): two
// launches of the hand-off synthesizer's trace (arrivals, async copies, flows), the second
// 5 us after the first by their host-time anchors, written as one Chrome trace and one
// Perfetto trace and read back.
#include "profiler/outputs/pipeline_trace.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/dump/collector.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/testing/handoff_synthesizer.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/profiler/outputs/perfetto/perfetto_packets.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::MicrosToNs;
using ::warptrace::testing::StatusIs;

constexpr uint64_t kFlowIdsPerLaunch = uint64_t{1} << 40;

// The synthesizer's trace, anchored to the host: boottime = globaltimer + `boot_offset`.
Timeline Launch(int64_t boot_offset) {
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs({});
  EXPECT_THAT(trace, IsOk());
  trace->layout.host_anchor = {true, 1000, 1000 + boot_offset, 0, 10};
  absl::StatusOr<std::unique_ptr<Trace>> collected =
      CollectTrace(trace->layout, std::move(trace->words));
  EXPECT_THAT(collected, IsOk());
  return (*collected)->timeline;
}

class PipelineTraceTest : public ::testing::Test {
 protected:
  PipelineTraceTest() : a_(Launch(1'000'000)), b_(Launch(1'005'000)) {}
  std::vector<PipelineLaunchTimeline> Launches() const {
    return {{"partition", &a_}, {"reduce", &b_}};
  }
  Timeline a_, b_;
};

TEST_F(PipelineTraceTest, ChromeHoldsEveryLaunchAsItsOwnProcessesOnOneAxis) {
  std::string single;
  llvm::raw_string_ostream single_os(single);
  ASSERT_THAT(WriteChromeTrace(a_, {}, single_os), IsOk());
  single_os.flush();
  const nlohmann::json one = nlohmann::json::parse(single);
  std::string text;
  llvm::raw_string_ostream os(text);
  ASSERT_THAT(WritePipelineChromeTrace(Launches(), os), IsOk());
  os.flush();
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  EXPECT_THAT(trace["traceEvents"], SizeIs(2 * one["traceEvents"].size()));

  std::set<std::string> processes;
  std::map<int, std::vector<const nlohmann::json*>> slices_by_launch, flows_by_launch;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const int launch = e["pid"].get<int64_t>() >= (int64_t{1} << 21) ? 1 : 0;
    if (e["ph"] == "M" && e["name"] == "process_name") {
      processes.insert(e["args"]["name"].get<std::string>());
    }
    if (e["ph"] == "X") slices_by_launch[launch].push_back(&e);
    if (e["ph"] == "s") {
      flows_by_launch[launch].push_back(&e);
      EXPECT_EQ(e["id"].get<uint64_t>() >= kFlowIdsPerLaunch, launch == 1) << e.dump();
    }
  }
  for (const std::string& p : processes) {
    EXPECT_TRUE(absl::StartsWith(p, "launch 1 partition: SM ") ||
                absl::StartsWith(p, "launch 2 reduce: SM "))
        << p;
  }
  EXPECT_THAT(processes, SizeIs(2 * processes.size() / 2));
  ASSERT_FALSE(slices_by_launch[0].empty());
  ASSERT_EQ(slices_by_launch[0].size(), slices_by_launch[1].size());
  ASSERT_FALSE(flows_by_launch[0].empty());
  EXPECT_EQ(flows_by_launch[0].size(), flows_by_launch[1].size());
  // The second launch ran 5 us later by the host's clock: every slice moved by 5000 ns.
  for (size_t i = 0; i < slices_by_launch[0].size(); ++i) {
    EXPECT_EQ(MicrosToNs((*slices_by_launch[1][i])["ts"]),
              MicrosToNs((*slices_by_launch[0][i])["ts"]) + 5000);
    EXPECT_EQ((*slices_by_launch[1][i])["dur"], (*slices_by_launch[0][i])["dur"]);
  }
  ASSERT_THAT(trace["otherData"]["pipeline"], SizeIs(2));
  EXPECT_EQ(trace["otherData"]["pipeline"][1]["name"], "reduce");
  EXPECT_EQ(trace["otherData"]["pipeline"][1]["offset_ns"], 5000);
  EXPECT_EQ(trace["otherData"]["pipeline"][0]["otherData"]["tool"], "warptrace");
}

TEST_F(PipelineTraceTest, PerfettoGivesEveryLaunchItsOwnTracksSequencesAndFlows) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  ASSERT_THAT(WritePipelinePerfettoTrace(Launches(), os), IsOk());
  os.flush();
  const std::vector<perfetto::TracePacket> packets = ReadPerfettoPackets(bytes);
  std::set<uint64_t> uuids;
  std::vector<std::string> roots;
  std::set<uint32_t> sequences;
  std::multiset<uint64_t> starts, ends;
  for (const perfetto::TracePacket& p : packets) {
    sequences.insert(p.trusted_packet_sequence_id());
    if (p.has_track_descriptor()) {
      const perfetto::TrackDescriptor& d = p.track_descriptor();
      EXPECT_TRUE(uuids.insert(d.uuid()).second) << "uuid declared twice: " << d.uuid();
      if (d.has_parent_uuid()) {
        EXPECT_EQ(uuids.count(d.parent_uuid()), 1u) << d.name() << ": parent not declared";
      } else {
        roots.push_back(d.name());
      }
    }
    if (p.has_track_event()) {
      const perfetto::TrackEvent& e = p.track_event();
      if (e.has_track_uuid()) {
        EXPECT_EQ(uuids.count(e.track_uuid()), 1u) << e.track_uuid();
      }
      starts.insert(e.flow_ids().begin(), e.flow_ids().end());
      ends.insert(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
    }
  }
  ASSERT_THAT(roots, SizeIs(2));
  EXPECT_THAT(roots[0], StartsWith("launch 1 partition: "));
  EXPECT_THAT(roots[1], StartsWith("launch 2 reduce: "));
  EXPECT_EQ(sequences, (std::set<uint32_t>{1, 2, 17, 18}));
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts, ends);  // every arrow starts once and ends once, within its launch
  size_t second = 0;
  for (uint64_t id : starts) second += id > kFlowIdsPerLaunch;
  EXPECT_EQ(2 * second, starts.size());
}

TEST(PipelineTraceErrorsTest, NoLaunchesOrANullTimelineAreRefused) {
  std::string out;
  llvm::raw_string_ostream os(out);
  EXPECT_THAT(WritePipelineChromeTrace({}, os),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs launches")));
  const std::vector<PipelineLaunchTimeline> null = {{"reduce", nullptr}};
  EXPECT_THAT(WritePipelinePerfettoTrace(null, os),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pipeline launch 0 (reduce) has no timeline")));
}

}  // namespace
}  // namespace warptrace
