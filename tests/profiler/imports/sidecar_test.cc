#include "profiler/imports/sidecar.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TraceLayout SampleLayout() {
  TraceLayout layout;
  layout.kernel_name = "gemm";
  layout.device_name = "NVIDIA H200";
  layout.grid = {4, 2, 1};
  layout.block = {256, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = 6;
  layout.placement = Placement::kShared;
  layout.sample = {1, 7, 2};
  layout.clock = {1'980'000, 132, "clock"};
  layout.sites = {{0, "kernel", SiteKind::kKernel, "gemm.cc:12"},
                  {1, "load \"A\"", SiteKind::kRegion, "gemm.cc:20"},
                  {2, "k loop", SiteKind::kLoopBody, "builder/for k"}};
  return layout;
}

std::string ToJson(const TraceLayout& layout) {
  std::string text;
  llvm::raw_string_ostream os(text);
  WriteLayoutJson(layout, os);
  os.flush();
  return text;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint32_t> Counting(size_t n) {
  std::vector<uint32_t> words(n);
  for (size_t i = 0; i < n; ++i) words[i] = static_cast<uint32_t>(i * 2654435761u);
  return words;
}

TEST(SidecarTest, LayoutRoundTripsThroughJson) {
  const TraceLayout layout = SampleLayout();
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(ToJson(layout));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, layout);
}

TEST(SidecarTest, JsonHasFormatVersionAndEveryField) {
  const nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  EXPECT_EQ(j["format"], "warptrace");
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["grid"], nlohmann::json::array({4, 2, 1}));
  EXPECT_EQ(j["unit"]["kind"], "warpgroup");
  EXPECT_EQ(j["placement"], "shared");
  EXPECT_EQ(j["sample"]["stride"], 2);
  EXPECT_EQ(j["clock"]["nominal_sm_clock_khz"], 1980000);
  EXPECT_EQ(j["clock"]["num_sms"], 132);
  ASSERT_EQ(j["sites"].size(), 3u);
  EXPECT_EQ(j["sites"][1]["name"], "load \"A\"");
  EXPECT_EQ(j["sites"][2]["kind"], "loop_body");
}

TEST(SidecarTest, HostAnchorRoundTripsWithEveryDigit) {
  TraceLayout layout = SampleLayout();
  // Past 2^53: a double would lose the last digits.
  layout.host_anchor = {true, 1'764'500'000'123'456'789, 98'765'432'101, 1'764'500'001'000'000'007,
                        250};
  const std::string json = ToJson(layout);
  EXPECT_THAT(json, HasSubstr("\"globaltimer_ns\": 1764500000123456789"));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->host_anchor, layout.host_anchor);
}

TEST(SidecarTest, SidecarWithoutHostAnchorStillLoadsWithNoAnchor) {
  const TraceLayout layout = SampleLayout();  // no anchor: the field is not written
  const std::string json = ToJson(layout);
  EXPECT_THAT(json, ::testing::Not(HasSubstr("host_anchor")));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_FALSE(parsed->host_anchor.known);
}

TEST(SidecarTest, HostBackendFlagRoundTripsAndOldSidecarsReadAsADevice) {
  TraceLayout layout = SampleLayout();
  layout.clock.host_backend = true;
  std::string json = ToJson(layout);
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_TRUE(parsed->clock.host_backend);
  EXPECT_EQ(*parsed, layout);
  // A sidecar written before the field existed: no "host_backend" key.
  const std::string field = "\"host_backend\": true";
  const size_t at = json.find(field);
  ASSERT_NE(at, std::string::npos) << json;
  const size_t comma = json.rfind(',', at);  // the separator before the field
  json.erase(comma, at + field.size() - comma);
  parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_FALSE(parsed->clock.host_backend);
}

TEST(SidecarTest, ParseNamesMistypedHostAnchorField) {
  TraceLayout layout = SampleLayout();
  layout.host_anchor = {true, 10, 20, 30, 0};
  std::string json = ToJson(layout);
  const std::string field = "\"boottime_ns\": 20";
  const size_t at = json.find(field);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, field.size(), "\"boottime_ns\": -5");
  EXPECT_THAT(ParseLayoutJson(json),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("host_anchor.boottime_ns")));
}

TEST(SidecarTest, RoleTableRoundTripsAndIsOmittedWhenEmpty) {
  TraceLayout layout = SampleLayout();
  EXPECT_FALSE(nlohmann::json::parse(ToJson(layout)).contains("unit_roles"));
  layout.unit_roles = {"producer", "consumer"};
  const std::string json = ToJson(layout);
  EXPECT_EQ(nlohmann::json::parse(json)["unit_roles"],
            nlohmann::json::array({"producer", "consumer"}));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->unit_roles, layout.unit_roles);
}

// The cluster shape (issue 50) is optional: written only for a cluster of several CTAs, and
// a sidecar without it (every older one) reads as 1x1x1.
TEST(SidecarTest, ClusterShapeRoundTripsAndOlderSidecarsReadAsNoCluster) {
  TraceLayout layout = SampleLayout();
  EXPECT_FALSE(nlohmann::json::parse(ToJson(layout)).contains("cluster"));
  absl::StatusOr<TraceLayout> old = ParseLayoutJson(ToJson(layout));
  ASSERT_THAT(old, IsOk());
  EXPECT_EQ(old->cluster, (Dim3{1, 1, 1}));
  layout.cluster = {2, 1, 1};
  layout.sample = {2, 8, 1};  // whole clusters, as a cluster trace's sample must be
  const std::string json = ToJson(layout);
  EXPECT_EQ(nlohmann::json::parse(json)["cluster"], nlohmann::json::array({2, 1, 1}));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->cluster, (Dim3{2, 1, 1}));
  EXPECT_EQ(*parsed, layout);
}

TEST(SidecarTest, ParseRejectsARoleTableOfTheWrongSizeOrType) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["unit_roles"] = {"producer"};  // the block has 2 warpgroups
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("role table names 1")));
  j["unit_roles"] = {"producer", 3};
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unit_roles[1]")));
}

TEST(SidecarTest, BarrierTableRoundTripsAndIsOmittedWhenEmpty) {
  TraceLayout layout = SampleLayout();
  EXPECT_FALSE(nlohmann::json::parse(ToJson(layout)).contains("barriers"));
  layout.barriers = {{0, "full[0]", 1}, {1, "empty[0]", 256}, {2, "misc", 0}};
  const std::string json = ToJson(layout);
  const nlohmann::json j = nlohmann::json::parse(json);
  ASSERT_EQ(j["barriers"].size(), 3u);
  EXPECT_EQ(j["barriers"][1]["name"], "empty[0]");
  EXPECT_EQ(j["barriers"][1]["arrivals_per_phase"], 256);
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->barriers, layout.barriers);
  EXPECT_EQ(*parsed, layout);
}

TEST(SidecarTest, SidecarWithoutBarrierTableReadsBackWithNone) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  ASSERT_FALSE(j.contains("barriers"));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_TRUE(parsed->barriers.empty());
}

TEST(SidecarTest, ParseRejectsABadBarrierTableNamingTheField) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["barriers"] = {{{"id", 0}, {"name", "full[0]"}, {"arrivals_per_phase", -1}}};
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("barriers[0].arrivals_per_phase")));
  j["barriers"] = {{{"id", 0}, {"name", "full[0]"}}};
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("barriers[0].arrivals_per_phase")));
  j["barriers"] = {{{"id", 1}, {"name", "full[0]"}, {"arrivals_per_phase", 1}}};
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has id 1")));
  j["barriers"] = {7};
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("barriers[0]")));
}

TEST(SidecarTest, InvalidUtf8NamesStillProduceValidJson) {
  TraceLayout layout = SampleLayout();
  layout.sites[1].name = "bad\xff name";
  const nlohmann::json j = nlohmann::json::parse(ToJson(layout));
  EXPECT_EQ(j["sites"][1]["name"], "bad\xEF\xBF\xBD name");  // U+FFFD replaces the bad byte
}

TEST(SidecarTest, ParseRejectsTextThatIsNotJson) {
  EXPECT_THAT(ParseLayoutJson("{\"format\": "),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(ParseLayoutJson("[1, 2]"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
}

TEST(SidecarTest, ParseRejectsUnknownFormatNamingIt) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["format"] = "mosaic-gpu";
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"mosaic-gpu\"")));
}

TEST(SidecarTest, ParseRejectsUnknownVersion) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["version"] = 3;
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sidecar version 3 is not supported: this build reads "
                                 "versions 1 to 2")));
}

// A layout whose sites include a TMA 2-D copy of 8192 bytes and a cp.async copy.
TraceLayout LayoutWithCopies() {
  TraceLayout layout = SampleLayout();
  SiteInfo tma{3, "load A", SiteKind::kAsyncCopy, "k > role producer > load A"};
  tma.copy_engine = CopyEngine::kTma2d;
  tma.copy_bytes = 8192;
  SiteInfo cp{4, "load B", SiteKind::kAsyncCopy, "k > load B"};
  cp.copy_engine = CopyEngine::kCpAsync;
  cp.copy_bytes = 2048;
  layout.sites.push_back(tma);
  layout.sites.push_back(cp);
  return layout;
}

TEST(SidecarTest, CopyEngineAndBytesRoundTripAndAreWrittenOnlyForCopies) {
  const TraceLayout layout = LayoutWithCopies();
  const nlohmann::json j = nlohmann::json::parse(ToJson(layout));
  EXPECT_EQ(j["sites"][3]["copy_engine"], "tma_2d");
  EXPECT_EQ(j["sites"][3]["copy_bytes"], 8192);
  EXPECT_EQ(j["sites"][4]["copy_engine"], "cp.async");
  EXPECT_FALSE(j["sites"][0].contains("copy_engine"));
  EXPECT_FALSE(j["sites"][0].contains("copy_bytes"));
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, layout);
}

TEST(SidecarTest, AVersion1SidecarWithoutCopyFieldsLoadsWithUnknownEngines) {
  nlohmann::json j = nlohmann::json::parse(ToJson(LayoutWithCopies()));
  j["version"] = 1;
  for (nlohmann::json& site : j["sites"]) {
    site.erase("copy_engine");
    site.erase("copy_bytes");
  }
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->sites[3].copy_engine, CopyEngine::kNone);
  EXPECT_EQ(parsed->sites[3].copy_bytes, 0u);
}

TEST(SidecarTest, ParseRejectsAnUnknownCopyEngineNamingTheField) {
  nlohmann::json j = nlohmann::json::parse(ToJson(LayoutWithCopies()));
  j["sites"][3]["copy_engine"] = "tma_6d";
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("sites[3].copy_engine"),
                             HasSubstr("unknown copy engine \"tma_6d\""))));
}

TEST(SidecarTest, MulticastFlagRoundTripsAndOlderSidecarsReadAsNoMulticast) {
  TraceLayout layout = LayoutWithCopies();
  layout.sites[3].multicast = true;
  nlohmann::json j = nlohmann::json::parse(ToJson(layout));
  EXPECT_EQ(j["sites"][3]["multicast"], true);
  EXPECT_FALSE(j["sites"][4].contains("multicast")) << "written only when true";
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, layout);
  j["sites"][3].erase("multicast");
  parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_FALSE(parsed->sites[3].multicast);
}

TEST(SidecarTest, ParseRejectsAMulticastFlagOnASiteThatIsNotACopy) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["sites"][1]["multicast"] = true;
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a region site marked multicast; only async_copy sites "
                                 "are")));
}

// SiteInfo::end_observed (trace version 5: the copy site keeps the end its issuer observed):
// written only when true, absent in older sidecars, and only on a copy that completes on a
// phase barrier (a cp.async group's end is always recorded).
TEST(SidecarTest, EndObservedRoundTripsAndOnlyACopyOnABarrierMayCarryIt) {
  TraceLayout layout = LayoutWithCopies();
  layout.sites[3].end_observed = true;
  nlohmann::json j = nlohmann::json::parse(ToJson(layout));
  EXPECT_EQ(j["sites"][3]["end_observed"], true);
  EXPECT_FALSE(j["sites"][4].contains("end_observed")) << "written only when true";
  absl::StatusOr<TraceLayout> parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, layout);
  j["sites"][3].erase("end_observed");
  parsed = ParseLayoutJson(j.dump());
  ASSERT_THAT(parsed, IsOk());
  EXPECT_FALSE(parsed->sites[3].end_observed);
  j["sites"][4]["end_observed"] = true;  // cp.async
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(copy engine cp.async) marked end_observed; only async_copy "
                                 "sites of a copy on a phase barrier")));
}

TEST(SidecarTest, ParseRejectsACopyEngineOnASiteThatIsNotACopy) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["sites"][1]["copy_engine"] = "bulk";
  j["sites"][1]["copy_bytes"] = 64;
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a region site but has a copy engine (bulk)")));
}

TEST(SidecarTest, ParseNamesMissingField) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["clock"].erase("num_sms");
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing field \"clock.num_sms\"")));
}

TEST(SidecarTest, ParseNamesMistypedFieldWithItsPath) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["sites"][2]["id"] = "two";
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"sites[2].id\" must be an unsigned integer")));
  j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["grid"] = nlohmann::json::array({4, 2});
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("found 2 elements")));
  j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["capacity"] = -1;
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"capacity\" must be")));
  j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["unit"]["kind"] = "quarter-warp";
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unit.kind")));
}

TEST(SidecarTest, ParseRejectsAnInvalidLayout) {
  nlohmann::json j = nlohmann::json::parse(ToJson(SampleLayout()));
  j["block"] = nlohmann::json::array({100, 1, 1});
  EXPECT_THAT(ParseLayoutJson(j.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid layout: block size 100")));
}

TEST(SidecarTest, SaveThenLoadRoundTripsLayoutAndWords) {
  const TraceLayout layout = SampleLayout();
  const std::vector<uint32_t> words = Counting(BufferBytes(layout) / 4);
  const std::string prefix = TestTempPath("roundtrip");
  ASSERT_THAT(SaveTrace(prefix, layout, words), IsOk());
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(prefix);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->layout, layout);
  EXPECT_EQ(loaded->words, words);
}

TEST(SidecarTest, LoadAcceptsThePrefixItsBinOrItsJson) {
  const TraceLayout layout = SampleLayout();
  const std::vector<uint32_t> words = Counting(BufferBytes(layout) / 4);
  const std::string prefix = TestTempPath("either_name");
  ASSERT_THAT(SaveTrace(prefix, layout, words), IsOk());
  for (const std::string& path : {prefix, prefix + ".bin", prefix + ".json"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(ResolveTracePrefix(path), prefix);
    absl::StatusOr<LoadedTrace> loaded = LoadTrace(path);
    ASSERT_THAT(loaded, IsOk());
    EXPECT_EQ(loaded->words, words);
  }
  // A name that is none of them is left alone, and the error names the sidecar looked for.
  const std::string missing = prefix + "_missing.bin";
  EXPECT_EQ(ResolveTracePrefix(missing), missing);
  EXPECT_THAT(LoadTrace(missing).status(), StatusIs(absl::StatusCode::kNotFound,
                                                    HasSubstr(missing + ".json")));
}

TEST(SidecarTest, SavedFilesAreDataNotPrograms) {
  const TraceLayout layout = SampleLayout();
  const std::string prefix = TestTempPath("modes");
  ASSERT_THAT(SaveTrace(prefix, layout, Counting(BufferBytes(layout) / 4)), IsOk());
  for (const std::string& file : {prefix + ".bin", prefix + ".json"}) {
    struct stat st {};
    ASSERT_EQ(stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0111, 0u) << file << " is executable";
  }
}

TEST(SidecarTest, SavingOverALoadedTraceIsRefusedAndKeepsIt) {
  const TraceLayout layout = SampleLayout();
  const std::vector<uint32_t> words = Counting(BufferBytes(layout) / 4);
  const std::string prefix = TestTempPath("loaded");
  ASSERT_THAT(SaveTrace(prefix, layout, words), IsOk());
  ASSERT_THAT(LoadTrace(prefix), IsOk());
  EXPECT_THAT(SaveTrace(prefix, layout, std::vector<uint32_t>(words.size(), 7)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("an output never replaces an input")));
  absl::StatusOr<LoadedTrace> reloaded = LoadTrace(prefix);
  ASSERT_THAT(reloaded, IsOk());
  EXPECT_EQ(reloaded->words, words);
}

TEST(SidecarTest, BinIsLittleEndianWords) {
  const TraceLayout layout = SampleLayout();
  std::vector<uint32_t> words(BufferBytes(layout) / 4, 0);
  words[0] = abi::kTraceMagic;
  const std::string prefix = TestTempPath("endian");
  ASSERT_THAT(SaveTrace(prefix, layout, words), IsOk());
  std::ifstream in(prefix + ".bin", std::ios::binary);
  char first[4];
  in.read(first, 4);
  EXPECT_EQ(std::string(first, 4), "WTRC");
}

TEST(SidecarTest, SaveRejectsWordCountThatDisagreesWithLayout) {
  const TraceLayout layout = SampleLayout();
  EXPECT_THAT(SaveTrace(TestTempPath("short"), layout, Counting(10)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has 10 words")));
}

TEST(SidecarTest, LoadReportsMissingFilesByName) {
  EXPECT_THAT(LoadTrace(TestTempPath("does_not_exist")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("does_not_exist.json")));
  const std::string prefix = TestTempPath("no_bin");
  WriteBytes(prefix + ".json", ToJson(SampleLayout()));
  EXPECT_THAT(LoadTrace(prefix),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no_bin.bin")));
}

TEST(SidecarTest, LoadExplainsBinWithAnotherCapacity) {
  TraceLayout layout = SampleLayout();
  const std::string prefix = TestTempPath("other_capacity");
  layout.capacity = 10;
  ASSERT_THAT(SaveTrace(prefix, layout, Counting(BufferBytes(layout) / 4)), IsOk());
  layout.capacity = 6;
  WriteBytes(prefix + ".json", ToJson(layout));
  // 6 records (3 sampled blocks x 2 warpgroups) of capacity 10 = 6 * 144 bytes.
  EXPECT_THAT(LoadTrace(prefix),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("holds 864 bytes"), HasSubstr("needs 672 bytes"),
                             HasSubstr("6 records of capacity 10 instead of 6"))));
}

TEST(SidecarTest, LoadExplainsBinThatIsNotWholeWords) {
  const TraceLayout layout = SampleLayout();
  const std::string prefix = TestTempPath("ragged");
  ASSERT_THAT(SaveTrace(prefix, layout, Counting(BufferBytes(layout) / 4)), IsOk());
  WriteBytes(prefix + ".bin", std::string(BufferBytes(layout) - 3, '\0'));
  EXPECT_THAT(LoadTrace(prefix), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("not even a whole number of 32-bit words")));
}

TEST(SidecarTest, LoadExplainsTruncatedBin) {
  const TraceLayout layout = SampleLayout();
  const std::string prefix = TestTempPath("truncated");
  ASSERT_THAT(SaveTrace(prefix, layout, Counting(BufferBytes(layout) / 4)), IsOk());
  WriteBytes(prefix + ".bin", std::string(BufferBytes(layout) - 8, '\0'));
  EXPECT_THAT(LoadTrace(prefix),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the file is truncated")));
}

TEST(SidecarTest, LoadNamesForeignFormatWithoutImporter) {
  const std::string prefix = TestTempPath("mosaic_unregistered");
  WriteBytes(prefix + ".json", R"({"format": "mosaic-gpu", "entries_per_warpgroup": 8})");
  EXPECT_THAT(LoadTrace(prefix),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("format \"mosaic-gpu\""),
                             HasSubstr("no importer is registered"))));
}

TEST(SidecarTest, LoadDispatchesForeignFormatToItsImporter) {
  const std::string prefix = TestTempPath("mosaic_registered");
  const std::string text = R"({"format": "mosaic-gpu", "entries_per_warpgroup": 8})";
  WriteBytes(prefix + ".json", text);
  LoadOptions options;
  std::string seen_prefix, seen_text;
  options.importers["mosaic-gpu"] = [&](absl::string_view p, absl::string_view t)
      -> absl::StatusOr<LoadedTrace> {
    seen_prefix = std::string(p);
    seen_text = std::string(t);
    LoadedTrace trace;
    trace.layout = SampleLayout();
    trace.words = std::vector<uint32_t>(BufferBytes(trace.layout) / 4, 0);
    return trace;
  };
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(prefix, options);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(seen_prefix, prefix);
  EXPECT_EQ(seen_text, text);
  EXPECT_EQ(loaded->layout, SampleLayout());
}

TEST(SidecarTest, SidecarFormatReadsTheFormatField) {
  EXPECT_THAT(SidecarFormat(R"({"format": "mosaic-gpu"})"),
              testing::IsOkAndHolds(std::string("mosaic-gpu")));
  EXPECT_THAT(SidecarFormat(R"({"format": 3})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"format\" must be")));
}

}  // namespace
}  // namespace warptrace
