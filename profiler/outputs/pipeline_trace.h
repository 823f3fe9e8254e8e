// One timeline of a program of several kernels (a pipeline: jit/run/pipeline.h): each launch's
// Timeline as a group of tracks of one Chrome trace and one Perfetto trace, all on one time
// axis, so the launches follow each other with the gaps between them visible.
//
//   std::vector<PipelineLaunchTimeline> launches = {{"partition", &a.timeline},
//                                                   {"reduce", &b.timeline}};
//   RETURN_IF_ERROR(WritePipelineChromeTraceFile(launches, "decode.trace.json"));
//   RETURN_IF_ERROR(WritePipelinePerfettoTraceFile(launches, "decode.pftrace"));
//
// The axis: each launch's globaltimer, moved onto CLOCK_BOOTTIME by its host-time anchor
// (TraceLayout::host_anchor) when every launch has one, so launches whose device clocks do
// not share an origin (the host backend's deterministic clock starts each launch at 0) still
// line up as they ran; else the globaltimer itself (one clock on a GPU).
//
// Chrome: each launch's trace (chrome_trace.h) with its processes renamed "launch 1 reduce:
// SM 17" and renumbered pid = launch * 2^21 + pid (sorted in launch order), its flow ids moved
// to launch * 2^40 + id, its ts moved to the pipeline's origin (the earliest launch start),
// and otherData {"tool": "warptrace", "pipeline": [{"launch", "name", "origin_ns",
// "offset_ns", "otherData": the launch's own}]}. Perfetto: each launch's trace
// (perfetto_writer.h, uncompressed) with its track uuids moved by launch * 2^52, its packet
// sequences by 16 * launch and its flow ids by launch * 2^40, its root track named
// "launch 1 reduce: KERNEL on DEVICE" and ranked by launch; the launches' packets
// concatenated (a Perfetto trace is a sequence of packets), uncompressed (about 10x the bytes
// of a single launch's compressed file).
//
// A launch name that is not valid UTF-8 is repaired (base/utf8.h). Errors: InvalidArgument
// for no launches, a null timeline or a Timeline the writers refuse (their messages, prefixed by the launch); the
// file's errors from WriteFileAtomically. Memory: each launch's trace is held whole while it
// is rewritten (a pipeline view, not for multi-GB single kernels).
#ifndef WARPTRACE_PROFILER_OUTPUTS_PIPELINE_TRACE_H_
#define WARPTRACE_PROFILER_OUTPUTS_PIPELINE_TRACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

struct PipelineLaunchTimeline {
  std::string name;  // the launch's name ("partition"), shown with its index
  const Timeline* timeline = nullptr;
};

absl::Status WritePipelineChromeTrace(absl::Span<const PipelineLaunchTimeline> launches,
                                      llvm::raw_ostream& os);
absl::Status WritePipelineChromeTraceFile(absl::Span<const PipelineLaunchTimeline> launches,
                                          absl::string_view path);
absl::Status WritePipelinePerfettoTrace(absl::Span<const PipelineLaunchTimeline> launches,
                                        llvm::raw_ostream& os);
absl::Status WritePipelinePerfettoTraceFile(absl::Span<const PipelineLaunchTimeline> launches,
                                            absl::string_view path);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PIPELINE_TRACE_H_
