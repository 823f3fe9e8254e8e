#include "profiler/trace/verdict.h"

#include "base/enum_table.h"

namespace warptrace {
namespace {

constexpr EnumTable<Verdict, 5> kVerdicts{"verdict", {{
    {Verdict::kComplete, "complete"},
    {Verdict::kTruncated, "truncated"},
    {Verdict::kOverflowed, "overflowed"},
    {Verdict::kCorrupt, "corrupt"},
    {Verdict::kMissing, "missing"},
}}};
static_assert(kVerdicts.Covers(5));

// Phrases, not names: never parsed.
constexpr EnumTable<ClockSource, kNumClockSources> kClockSourceReasons{"clock source", {{
    {ClockSource::kCalibrated, "calibrated"},
    {ClockSource::kTooShort, "too short to calibrate"},
    {ClockSource::kNoEndStamp, "no trustworthy end stamp"},
    {ClockSource::kImplausibleRate, "a measured rate outside 1/4..4x nominal"},
    {ClockSource::kWrapsLost, "%clock wraps that could not be placed"},
    {ClockSource::kNoRecord, "no record"},
}}};
static_assert(kClockSourceReasons.Covers(kNumClockSources));

}  // namespace

const char* VerdictName(Verdict verdict) { return kVerdicts.Name(verdict); }

const char* ClockSourceReason(ClockSource source) { return kClockSourceReasons.Name(source); }

}  // namespace warptrace
