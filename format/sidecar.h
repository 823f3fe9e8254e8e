// The sidecar schema: the on-disk form of a trace. `PREFIX.bin` holds the raw buffer
// (little-endian uint32 words, exactly as the device wrote them) and `PREFIX.json` the
// TraceLayout that decodes it, so a buffer saved anywhere can be decoded later by the CLI.
// Reading one back, with importers for foreign sidecars, is profiler/imports/sidecar.h.
//
// Sidecar schema (version 2); every field is required except "host_anchor", "unit_roles"
// and "barriers", and a site's "copy_engine" and "copy_bytes":
//
//   {
//     "format": "warptrace", "version": 2,
//     "kernel_name": "gemm", "device_name": "NVIDIA H200",
//     "grid": [8, 8, 1], "block": [256, 1, 1],
//     "unit": {"kind": "warpgroup", "first_thread": 0, "num_threads": 0,
//              "recorder_offset": 0},
//     "capacity": 258, "placement": "global",
//     "sample": {"begin": 0, "end": 4294967295, "stride": 1},
//     "clock": {"nominal_sm_clock_khz": 1980000, "num_sms": 132, "event_clock": "clock"},
//     "sites": [{"id": 0, "name": "kernel", "kind": "kernel", "origin": "gemm.cc:12"},
//               {"id": 5, "name": "load A", "kind": "async_copy", "origin": "...",
//                "copy_engine": "tma_2d", "copy_bytes": 8192}, ...],
//     "host_anchor": {"globaltimer_ns": N, "boottime_ns": N, "realtime_ns": N,
//                     "uncertainty_ns": N},
//     "unit_roles": ["producer", "consumer", "consumer"],
//     "barriers": [{"id": 0, "name": "full[0]", "arrivals_per_phase": 1}, ...]
//   }
// Version 2 added a site's "copy_engine" and "copy_bytes" (SiteInfo::copy_engine,
// copy_bytes: what moves an async copy and how many bytes one moves), written for the copy
// sites whose engine is known. Version 1 sidecars (without them) stay readable: their
// sites read back with CopyEngine::kNone and 0 bytes.
//
// "host_anchor" (TraceLayout::host_anchor) is optional: written when the anchor is known,
// absent in sidecars saved before it existed, which stay readable (no anchor).
//
// "unit_roles" (TraceLayout::unit_roles, one role name per trace unit of a block) is
// optional: written only when the layout has a role table, and a sidecar without it (every
// sidecar written before it existed) reads back with an empty table.
//
// "barriers" (TraceLayout::barriers, the phase barriers event payloads name by id) is
// optional in the same way: written only when the layout has a barrier table, read back
// empty when absent.
//
// Thread-safety: all functions are reentrant; concurrent SaveTrace calls on one prefix leave
// one of the complete versions (writes are atomic renames).
#ifndef WARPTRACE_FORMAT_SIDECAR_H_
#define WARPTRACE_FORMAT_SIDECAR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {

inline constexpr char kSidecarFormat[] = "warptrace";
inline constexpr int64_t kSidecarVersion = 2;        // written
inline constexpr int64_t kOldestSidecarVersion = 1;  // the oldest read

// Streams the layout as a sidecar JSON object (pretty-printed, deterministic order).
// Names pass through JSON's UTF-8 repair, so they always produce valid JSON.
void WriteLayoutJson(const TraceLayout& layout, llvm::raw_ostream& os);

// Parses a "warptrace" sidecar and validates the layout it describes.
// InvalidArgument: not JSON (with line/column), not an object, a "format" other than
// "warptrace" (naming it), a version outside kOldestSidecarVersion..kSidecarVersion, a
// missing field, a field of the wrong type or out of range (naming its path, e.g.
// "sites[3].kind"), or a layout that ValidateLayout rejects.
absl::StatusOr<TraceLayout> ParseLayoutJson(absl::string_view json);

// Reads the "format" field of a sidecar. InvalidArgument if `json` is not a JSON object
// with a string "format".
absl::StatusOr<std::string> SidecarFormat(absl::string_view json);

// Writes PREFIX.bin (words, little-endian) and PREFIX.json atomically (each to a temporary
// file renamed into place). The words must be exactly BufferBytes(layout) long.
// InvalidArgument: invalid layout or a word count that disagrees with it.
// FailedPrecondition: a file would replace one this process read (base/file.h).
// NotFound/PermissionDenied/ResourceExhausted...: the file system's error, naming the path
// (codes as in base/status_adapters.h). Neither file is executable.
absl::Status SaveTrace(absl::string_view prefix, const TraceLayout& layout,
                       absl::Span<const uint32_t> words);

// OK when `bytes` is exactly the buffer `layout` describes. DataLoss otherwise; the
// message gives expected and actual sizes, what the actual size would mean (records of
// this layout, or the capacity that would fit), and what to check. `what` names the buffer.
absl::Status CheckBufferBytes(const TraceLayout& layout, absl::string_view bytes,
                              absl::string_view what);

// Converts an on-disk buffer (little-endian bytes) to words, checking its size against the
// layout as LoadTrace does. `what` names the buffer in messages (e.g. the path).
// DataLoss on a size mismatch.
absl::StatusOr<std::vector<uint32_t>> WordsFromBytes(const TraceLayout& layout,
                                                     absl::string_view bytes,
                                                     absl::string_view what);

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_SIDECAR_H_
