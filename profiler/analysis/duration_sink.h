// DurationSink: a TraceSink (sink.h) that keeps every slice's duration by (role, site name,
// loop iteration), and each block's duration: the samples DiffTraces (profiler/analysis/
// diff.h) compares with a rank test.
//
//   DurationSink durations;
//   TraceSink* sinks[] = {&durations};
//   RETURN_IF_ERROR(DumpTrace(layout, words, {}, sinks, result));
//   for (const auto& [key, sample] : durations.samples()) ...
//
// Keys: role is the layout's unit role ("all" without a role table, "(none)" for an empty
// role), iteration -1 for a row over all of a site's slices, else the index of the
// innermost enclosing loop-body instance within its unit (a loop-body slice is its own
// iteration). Sample::self_ns is the exclusive time (minus direct children).
//
// Memory: 8 bytes per slice (twice for slices inside a loop). Errors: InvalidArgument from
// AddUnit for a slice whose site is outside the layout's site table. Not thread-safe.
#ifndef WARPTRACE_PROFILER_ANALYSIS_DURATION_SINK_H_
#define WARPTRACE_PROFILER_ANALYSIS_DURATION_SINK_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "profiler/dump/sink.h"

namespace warptrace {

// A sink that keeps every slice duration by (role, site name, iteration), for a diff.
class DurationSink : public TraceSink {
 public:
  struct Sample {
    std::vector<double> durations;  // ns, in arrival order
    double self_ns = 0;             // total exclusive time
    SiteKind kind = SiteKind::kRegion;
  };
  using Key = std::tuple<std::string, std::string, int64_t>;  // role, site name, iteration

  absl::string_view Name() const override { return "diff"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

  const std::map<Key, Sample>& samples() const { return samples_; }
  const std::vector<double>& block_ns() const { return block_ns_; }
  uint64_t blocks() const { return block_ns_.size(); }
  const std::string& kernel_name() const { return kernel_name_; }

 private:
  const TraceLayout* layout_ = nullptr;
  std::string kernel_name_;
  std::map<Key, Sample> samples_;
  std::vector<double> block_ns_;
  struct Open {
    Sample* all;
    Sample* iteration;  // null outside loops
    int64_t index;      // iteration index, -1 outside loops
    int64_t dur;
    int64_t child_ns;
  };
  std::vector<Open> stack_;
  std::vector<int64_t> loop_count_;  // per site, within the current unit
  bool in_block_ = false;
  uint32_t block_ = 0;
  int64_t block_start_ = 0, block_end_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_DURATION_SINK_H_
