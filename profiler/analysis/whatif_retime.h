// The re-timing of a launch over its dependency graph (whatif_graph.h), by the rules whatif.h
// states: speedups resolved against the trace's sites and roles, per-instance factors, the
// re-timed points in dependency order, and the predicted Timeline. Internal to the what-if
// targets (whatif.h, the causal profile).
//
//   ASSIGN_OR_RETURN(RetimeEngine engine, MakeRetimeEngine(timeline));
//   uint64_t instances = 0;
//   ASSIGN_OR_RETURN(Retimed r, engine.Run(speedups, &instances));
//   const int64_t predicted = KernelNs(timeline, &r.start_ns, &r.end_ns);
//   Timeline predicted_timeline = BuildPredicted(engine.graph, r);
//
// Errors: Resolve's and ComputeFactors' InvalidArgument (whatif.h lists them); Retime's
// Internal for a cycle in a block's hand-off graph; MakeRetimeEngine's (BuildGraph,
// CheckLinked). Thread-safety: reentrant; the graph and the timeline are only read.
#ifndef WARPTRACE_PROFILER_ANALYSIS_WHATIF_RETIME_H_
#define WARPTRACE_PROFILER_ANALYSIS_WHATIF_RETIME_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "profiler/analysis/speedup.h"
#include "profiler/analysis/whatif_graph.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {
namespace whatif_internal {

// A speedup resolved against the layout: the sites it names and its role.
struct Resolved {
  const Speedup* speedup;
  std::vector<bool> site;  // by site id
  int32_t role;            // -1: every role
};

absl::StatusOr<std::vector<Resolved>> Resolve(const Graph& g, absl::Span<const Speedup> speedups);

// The per-instance factors of one re-timing.
struct Factors {
  std::vector<std::vector<double>> slice;  // by unit position, by slice
  std::vector<std::vector<double>> async;  // by unit position, by async span
  uint64_t instances = 0;
};

absl::StatusOr<Factors> ComputeFactors(const Graph& g, absl::Span<const Resolved> resolved);
// Every factor 1: the re-timing that changes nothing (it counts the unlinked waits).
Factors NeutralFactors(const Graph& g);

// The re-timed points of every unit.
struct Retimed {
  std::vector<std::vector<int64_t>> point_ns;  // by unit position, by point
  std::vector<int64_t> start_ns, end_ns;       // by unit position
  uint64_t unlinked_waits = 0;
};

absl::StatusOr<Retimed> Retime(const Graph& g, const Factors& f);

// The predicted Timeline: every time of g's timeline replaced by its re-timed one.
Timeline BuildPredicted(const Graph& g, const Retimed& r);

// The kernel time (first unit start to last unit end) of `t`, or with the units' times
// replaced by `start` / `end` (by unit position) where given.
int64_t KernelNs(const Timeline& t, const std::vector<int64_t>* start,
                 const std::vector<int64_t>* end);

// A built and checked graph, re-timed once per Run.
struct RetimeEngine {
  Graph graph;
  absl::StatusOr<Retimed> Run(absl::Span<const Speedup> speedups, uint64_t* instances) const;
};

absl::StatusOr<RetimeEngine> MakeRetimeEngine(const Timeline& timeline);

}  // namespace whatif_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_WHATIF_RETIME_H_
