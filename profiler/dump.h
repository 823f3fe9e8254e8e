// DumpTrace: the whole dump of a raw buffer — decode, verify, then timeline, Chrome trace
// and summary chunk by chunk — with memory that does not grow with the event count beyond
// the input buffer.
//
//   DumpOptions options;
//   options.chrome_trace_path = "trace.json";
//   options.summary = true;
//   DumpResult result;
//   absl::Status status = DumpTrace(layout, words, options, result);
//   // result.report is filled whenever decoding succeeded, also when verification failed.
//
// Why chunks. A whole-trace Timeline holds 32 bytes per slice (16 per event), twice the
// raw buffer's 8 per event. DumpTrace builds the Timeline of a few consecutive records at a
// time (DumpOptions::chunk_events) (BuildTimeline on a slice of the decoded trace and its verdicts), hands
// it to a ChromeTraceWriter and a SummaryBuilder, and drops it. What stays: the decoded
// record table and the verify report (O(units)), the summary's one int64 per slice when
// `summary` is set (exact percentiles need every duration), and one chunk's Timeline
// (4 MB by default).
// Timestamps are relative to the earliest unit start of the whole trace, found from the
// decoded headers before any chunk is built, so the output holds the same events as
// WriteChromeTrace of the whole Timeline (thread metadata comes per chunk), and the same
// otherData except the clock note, which is assembled from the units' clocks
// (BuildTimeline's own note when there is a single chunk).
//
// Errors:
//   the codes of Decode (InvalidArgument, DataLoss) — result.report is empty then;
//   VerifyReport::ToStatus (DataLoss, ResourceExhausted) when verification fails — nothing
//     is written then;
//   the codes of BuildTimeline and WriteChromeTraceFile;
//   Internal if a chunk starts before the trace origin computed from the headers.
#ifndef WARPTRACE_PROFILER_DUMP_H_
#define WARPTRACE_PROFILER_DUMP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/chrome_trace.h"
#include "profiler/layout.h"
#include "profiler/summary.h"
#include "profiler/timeline.h"
#include "profiler/verify.h"

namespace warptrace {

struct DumpOptions {
  VerifyOptions verify;
  TimelineOptions timeline;
  ChromeTraceOptions chrome;
  std::string chrome_trace_path;  // empty: no Chrome trace ("-": stdout)
  // When set, the Chrome trace is streamed here instead of to chrome_trace_path (the
  // caller checks the stream's errors). Not owned.
  llvm::raw_ostream* chrome_trace_stream = nullptr;
  bool summary = false;           // fill DumpResult::summary
  // Events per Timeline chunk (at most; a chunk holds at least one record): with the
  // layout's capacity c, each chunk is max(1, chunk_events / c) records, about
  // 16 * chunk_events bytes of slices.
  uint64_t chunk_events = uint64_t{1} << 18;
};

struct DumpResult {
  VerifyReport report;
  std::optional<Summary> summary;
  std::string clock_note;
  uint64_t slices = 0;
  int64_t origin_ns = 0;
  int64_t end_ns = 0;
};

absl::Status DumpTrace(const TraceLayout& layout, absl::Span<const uint32_t> words,
                       const DumpOptions& options, DumpResult& result);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_H_
