// Test-only: checks a parsed Chrome trace (nlohmann::json, an independent parser) against the
// invariants the viewers need and stay silent about when broken. Returns the list of
// violations (empty when the trace is sound) so a test prints all of them.
//
//   nlohmann::json trace = nlohmann::json::parse(text);
//   EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
//
// Checked: a top-level object with displayTimeUnit "ns" or "ms", an "otherData" object and
// a "traceEvents" array; every event an object with a string "ph" and integer pid/tid;
// slices ("X", "B", "E") with numeric ts >= 0; "X" with numeric dur >= 0; per (pid, tid),
// in file order: ts never decreasing for B/E, X slices properly nested (a slice that starts
// inside another ends inside it), every E matched by an earlier B and every B closed by the
// end; every (pid, tid) with slices named by thread_name metadata and every pid by
// process_name metadata, each with sort-index metadata.
// Instants ("i"): numeric ts >= 0 and thread scope ("s": "t"). Flow events ("s", "f"): a
// numeric ts >= 0, an "id", "name" and "cat"; every "s" has exactly one "f" with the same
// id, name and cat and vice versa; every "f" binds to its enclosing slice ("bp": "e"); and
// each binding point lies strictly inside a slice (X or B/E) of its own thread, so both
// viewers attach the arrow (neither draws one that binds to nothing, nor warns about it).
#ifndef WARPTRACE_TESTS_PROFILER_CHROME_TRACE_CHECKER_H_
#define WARPTRACE_TESTS_PROFILER_CHROME_TRACE_CHECKER_H_

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace warptrace::testing {

// µs with three decimals → integer ns, exact for any ts a kernel trace has (< 2^53 / 1000).
inline int64_t MicrosToNs(const nlohmann::json& value) {
  return std::llround(value.get<double>() * 1000.0);
}

inline std::vector<std::string> ChromeTraceViolations(const nlohmann::json& trace) {
  std::vector<std::string> v;
  if (!trace.is_object()) return {"top level is not an object"};
  if (!trace.contains("displayTimeUnit") || !trace["displayTimeUnit"].is_string() ||
      (trace["displayTimeUnit"] != "ns" && trace["displayTimeUnit"] != "ms")) {
    v.push_back("displayTimeUnit missing or not \"ns\"/\"ms\"");
  }
  if (!trace.contains("otherData") || !trace["otherData"].is_object()) {
    v.push_back("otherData missing");
  }
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    v.push_back("traceEvents missing");
    return v;
  }
  using Track = std::pair<int64_t, int64_t>;
  struct TrackState {
    int64_t last_ts = 0;
    std::vector<int64_t> x_ends;  // open X slices' end times
    size_t open_b = 0;
    std::vector<int64_t> b_begins;                       // open B events' ts
    std::vector<std::pair<int64_t, int64_t>> intervals;  // every slice's [begin, end]
  };
  struct FlowPoint {
    Track track;
    int64_t ts = 0;
    std::string at;
  };
  // (id, name, cat) -> its "s" and "f" events.
  std::map<std::string, std::pair<std::vector<FlowPoint>, std::vector<FlowPoint>>> flows;
  std::map<Track, TrackState> tracks;
  std::set<Track> named_threads, sorted_threads;
  std::set<int64_t> named_processes, sorted_processes;
  size_t index = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const std::string at = absl::StrCat("event ", index++, " ", e.dump(), ": ");
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      v.push_back(at + "not an object with a string ph");
      continue;
    }
    if (!e.contains("pid") || !e["pid"].is_number_integer() || !e.contains("tid") ||
        !e["tid"].is_number_integer()) {
      v.push_back(at + "pid/tid missing or not integers");
      continue;
    }
    const std::string ph = e["ph"];
    const Track track{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
    if (ph == "M") {
      const std::string name = e.value("name", "");
      if (!e.contains("args") || !e["args"].is_object()) v.push_back(at + "metadata without args");
      if (name == "process_name") named_processes.insert(track.first);
      if (name == "process_sort_index") sorted_processes.insert(track.first);
      if (name == "thread_name") named_threads.insert(track);
      if (name == "thread_sort_index") sorted_threads.insert(track);
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E" && ph != "i" && ph != "s" && ph != "f") {
      v.push_back(at + "unexpected phase");
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      v.push_back(at + "ts missing or not a number");
      continue;
    }
    const int64_t ts = MicrosToNs(e["ts"]);
    if (ts < 0) v.push_back(at + "negative ts");
    TrackState& state = tracks[track];
    if (ph == "i") {
      if (e.value("s", "") != "t") v.push_back(at + "instant without thread scope \"s\": \"t\"");
      continue;
    }
    if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !e.contains("name") || !e["name"].is_string() ||
          !e.contains("cat") || !e["cat"].is_string()) {
        v.push_back(at + "flow event without id, name or cat");
        continue;
      }
      if (ph == "f" && e.value("bp", "") != "e") {
        v.push_back(at + "flow end does not bind to its enclosing slice (\"bp\": \"e\")");
      }
      const std::string key = absl::StrCat(e["id"].dump(), " ", e["name"].dump(), " ",
                                           e["cat"].dump());
      auto& ends = flows[key];
      (ph == "s" ? ends.first : ends.second).push_back({track, ts, at});
      continue;
    }
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number()) {
        v.push_back(at + "dur missing or not a number");
        continue;
      }
      const int64_t dur = MicrosToNs(e["dur"]);
      if (dur < 0) v.push_back(at + "negative dur");
      if (ts < state.last_ts) v.push_back(at + "X slice starts before the previous one");
      while (!state.x_ends.empty() && state.x_ends.back() <= ts) state.x_ends.pop_back();
      if (!state.x_ends.empty() && ts + dur > state.x_ends.back()) {
        v.push_back(at + "X slice overlaps its enclosing slice without nesting in it");
      }
      state.x_ends.push_back(ts + dur);
      state.intervals.push_back({ts, ts + dur});
    } else {
      if (ts < state.last_ts) v.push_back(at + "B/E ts goes backwards on its thread");
      if (ph == "B") {
        ++state.open_b;
        state.b_begins.push_back(ts);
      } else if (state.open_b == 0) {
        v.push_back(at + "E without an open B");
      } else {
        --state.open_b;
        state.intervals.push_back({state.b_begins.back(), ts});
        state.b_begins.pop_back();
      }
    }
    state.last_ts = ts;
  }
  for (const auto& [key, ends] : flows) {
    if (ends.first.size() != 1 || ends.second.size() != 1) {
      v.push_back(absl::StrCat("flow ", key, ": ", ends.first.size(), " \"s\" and ",
                               ends.second.size(), " \"f\" events, expected one each"));
    }
    for (const auto* points : {&ends.first, &ends.second}) {
      for (const FlowPoint& p : *points) {
        bool inside = false;
        for (const auto& [begin, end] : tracks[p.track].intervals) {
          inside = inside || (begin < p.ts && p.ts < end);
        }
        if (!inside) v.push_back(p.at + "flow event is not strictly inside a slice of its thread");
      }
    }
  }
  for (const auto& [track, state] : tracks) {
    const std::string at = absl::StrCat("thread (pid ", track.first, ", tid ", track.second, "): ");
    if (state.open_b != 0) v.push_back(absl::StrCat(at, state.open_b, " B events never closed"));
    if (!named_threads.count(track)) v.push_back(at + "no thread_name metadata");
    if (!sorted_threads.count(track)) v.push_back(at + "no thread_sort_index metadata");
    if (!named_processes.count(track.first)) v.push_back(at + "its pid has no process_name");
    if (!sorted_processes.count(track.first)) v.push_back(at + "its pid has no process_sort_index");
  }
  return v;
}

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_PROFILER_CHROME_TRACE_CHECKER_H_
