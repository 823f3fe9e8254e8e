#include "profiler/frontend/dump_settings.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/JSON.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TEST(DumpSettingsTest, TheStructsDefaultsAreTheTablesDefaults) {
  // Setting every key to its spec's default text leaves a default DumpSettings unchanged,
  // and setting it to anything else changes it: each row reaches its own field.
  const DumpSettings defaults;
  std::set<std::string> keys;
  for (const DumpSettingSpec& spec : DumpSettingSpecs()) {
    EXPECT_TRUE(keys.insert(std::string(spec.key)).second) << spec.key << " twice";
    DumpSettings s;
    auto v_or = ParseSettingText(spec, spec.default_text, spec.key);
    ASSERT_THAT(v_or.status(), IsOk());
    SettingValue v = *std::move(v_or);
    if (spec.key != "output_fd") {  // -1 (none) is below its bound: never set, only default
      ASSERT_THAT(SetDumpSetting(s, spec.key, v, spec.key), IsOk());
      EXPECT_EQ(s, defaults) << spec.key << "'s default_text is not DumpSettings' default";
    }
    SettingValue other = spec.type == SettingType::kString ? SettingValue(std::string("zz"))
                         : spec.type == SettingType::kBool
                             ? SettingValue(spec.default_text != "true")
                             : SettingValue(int64_t{spec.max});
    DumpSettings changed;
    ASSERT_THAT(SetDumpSetting(changed, spec.key, other, spec.key), IsOk());
    EXPECT_NE(changed, defaults) << spec.key << " sets no field";
  }
}

TEST(DumpSettingsTest, CompileTimeDefaultsAreTheTables) {
  static_assert(DumpSettingIntDefault("threads") == 0);
  static_assert(DumpSettingIntDefault("output_fd") == -1);
  static_assert(DumpSettingBoolDefault("causal_profile"));
  static_assert(!DumpSettingBoolDefault("summary"));
  EXPECT_EQ(DumpSettingDoc("report"), FindDumpSetting("report")->doc);
}

TEST(DumpSettingsTest, WrongTypesBoundsAndKeysAreNamedWithWhatIsExpected) {
  DumpSettings s;
  EXPECT_THAT(SetDumpSetting(s, "threads", int64_t{4097}, "--threads"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--threads must be an integer from 0 to 4096")));
  EXPECT_THAT(SetDumpSetting(s, "threads", int64_t{-1}, "--threads"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from 0 to 4096")));
  EXPECT_THAT(SetDumpSetting(s, "summary", std::string("yes"), "\"summary\""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"summary\" must be true or false")));
  EXPECT_THAT(SetDumpSetting(s, "report", std::monostate(), "\"report\""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a string")));
  EXPECT_THAT(SetDumpSetting(s, "colour", true, "\"colour\""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("known: output, output_fd, output_memory, format")));
  EXPECT_THAT(ParseSettingText(*FindDumpSetting("sm_clock_khz"), "fast", "--sm-clock-khz"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--sm-clock-khz=fast: expected an integer from 0 to")));
  EXPECT_EQ(s, DumpSettings()) << "a refused value changed the settings";
  auto no_or = ParseSettingText(*FindDumpSetting("causal_profile"),
                                                         "No", "--causal-profile");
  ASSERT_THAT(no_or.status(), IsOk());
  SettingValue no = *std::move(no_or);
  EXPECT_EQ(no, SettingValue(false));
}

TEST(DumpSettingsTest, MakeDumpRequestDecidesTheRulesOnce) {
  DumpSettings s;
  auto plain_or = MakeDumpRequest(s, nullptr);
  ASSERT_THAT(plain_or.status(), IsOk());
  DumpRequest plain = *std::move(plain_or);
  EXPECT_TRUE(plain.traces.empty());
  EXPECT_FALSE(plain.causal_profile) << "no summary, no analysis: no causal profile";
  s.analysis_output = "a.json";
  auto with_analysis_or = MakeDumpRequest(s, nullptr);
  ASSERT_THAT(with_analysis_or.status(), IsOk());
  DumpRequest with_analysis = *std::move(with_analysis_or);
  EXPECT_TRUE(with_analysis.causal_profile) << "the analysis' file implies it";
  s.causal_profile = false;
  auto off_or = MakeDumpRequest(s, nullptr);
  ASSERT_THAT(off_or.status(), IsOk());
  DumpRequest off = *std::move(off_or);
  EXPECT_FALSE(off.causal_profile);

  DumpSettings t;
  t.output = "x.pftrace";
  t.events = "be";
  t.json_args = "full";
  auto cli = [](absl::string_view key) { return absl::StrCat("--", key); };
  auto traced_or = MakeDumpRequest(t, cli);
  ASSERT_THAT(traced_or.status(), IsOk());
  DumpRequest traced = *std::move(traced_or);
  ASSERT_EQ(traced.traces.size(), 1u);
  EXPECT_EQ(traced.traces[0].format, TraceFormat::kPerfetto);
  EXPECT_EQ(traced.traces[0].chrome.events, ChromeEventStyle::kBeginEnd);
  EXPECT_EQ(traced.traces[0].role, "trace (--output)");
  t.output_memory = true;
  EXPECT_THAT(MakeDumpRequest(t, cli).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than one of --output, --output_fd and --output_memory")));
  t.output_memory = false;
  t.events = "y";
  EXPECT_THAT(MakeDumpRequest(t, cli).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--events: ")));
}

TEST(DumpSettingsTest, TheTableAsJsonIsTheTable) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(DumpSettingsJson());
  ASSERT_TRUE(static_cast<bool>(parsed));
  const llvm::json::Array* rows = parsed->getAsArray();
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->size(), DumpSettingSpecs().size());
  const llvm::json::Object* threads = (*rows)[DumpSettingSpecs().size() - 1].getAsObject();
  EXPECT_EQ(threads->getString("key")->str(), "threads");
  EXPECT_EQ(threads->getString("type")->str(), "integer");
  EXPECT_EQ(*threads->getInteger("max"), 4096);
}

}  // namespace
}  // namespace warptrace
