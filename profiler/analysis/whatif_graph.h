// The dependency graph of a recorded launch, as the what-if re-timing (whatif_retime.h) walks
// it; whatif.h describes what its points and edges mean. Internal to the what-if targets.
//
//   ASSIGN_OR_RETURN(Graph g, BuildGraph(timeline));  // g refers to `timeline`: keep it alive
//   RETURN_IF_ERROR(CheckLinked(g));
//
// Errors: BuildGraph's InvalidArgument for a timeline that contradicts its layout (a slice
// of a site outside the site table, a flow linking two blocks); CheckLinked's
// FailedPrecondition (NoHandoffsError) for several units per block and no flows.
// Thread-safety: a Graph is immutable once built.
#ifndef WARPTRACE_PROFILER_ANALYSIS_WHATIF_GRAPH_H_
#define WARPTRACE_PROFILER_ANALYSIS_WHATIF_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {
namespace whatif_internal {

enum class PointKind : uint8_t { kSliceBegin, kSliceEnd, kInstant, kAsyncBegin, kAsyncEnd };

// One program point of a unit: a slice's begin or end, an instant, an async issue or
// observed completion.
struct Point {
  int64_t ns;
  int32_t cls;  // tie order at one ns (see BuildGraph)
  int32_t key;  // tie order inside a class
  PointKind kind;
  uint32_t index;  // into the unit's slices, instants or async spans
};

// A releaser of a wait: an arrival on some unit of the block.
struct Releaser {
  uint32_t unit;   // position in Timeline::units
  uint32_t point;  // its point there
  int64_t ns;      // measured
};

struct UnitGraph {
  const UnitTimeline* u = nullptr;
  uint32_t role = 0;  // index into Graph::roles
  std::vector<Point> points;  // in program order
  std::vector<uint32_t> point_of_instant;
  std::vector<uint32_t> point_of_async_begin;
  std::vector<std::vector<Releaser>> releasers;  // by slice (waits only)
  std::vector<int64_t> waiting_inside;           // by slice: outermost waits inside it
  std::vector<bool> is_wait;                     // by slice
};

struct BlockGraph {
  uint32_t block_linear = 0;
  uint32_t sm_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<uint32_t> units;  // positions in Timeline::units (with records)
};

struct Graph {
  const Timeline* timeline = nullptr;  // not owned
  std::vector<std::string> roles;
  std::vector<UnitGraph> units;      // by position in Timeline::units
  std::vector<BlockGraph> blocks;    // by start
  std::vector<int32_t> occupancy_pred;  // by block (index into blocks), -1 none
  uint64_t handoff_edges = 0;
  uint64_t completion_edges = 0;
  uint64_t occupancy_edges = 0;
  uint64_t flows = 0;
};

absl::StatusOr<Graph> BuildGraph(const Timeline& t);

// FailedPrecondition when the units of a block cannot be linked (several per block, no
// flows): a prediction would be a guess.
absl::Status CheckLinked(const Graph& g);
// The FailedPrecondition CheckLinked returns, saying why and what to record instead.
absl::Status NoHandoffsError();

// What the graph cannot know (WhatIfPrediction::limitations, CausalProfile::limitations).
std::vector<std::string> GraphLimitations(uint64_t unlinked_waits);

}  // namespace whatif_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_WHATIF_GRAPH_H_
