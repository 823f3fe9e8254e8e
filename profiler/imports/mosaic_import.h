// Mosaic GPU import: reads a buffer written by JAX's Mosaic GPU profiler
// (jax/experimental/mosaic/gpu/profiler.py) and turns it into a warptrace TraceLayout and
// buffer of ABI records, so the same decode -> verify -> timeline -> Chrome trace / summary
// path applies.
//
// Input, on disk as PREFIX.bin + PREFIX.json:
//   PREFIX.bin   uint32 little-endian words, shape [blocks][traces per block][E], where
//                E = entries_per_warpgroup and a trace belongs to one warpgroup (128
//                threads) or, with "trace_scope": "warp", one warp (32 threads). Per trace:
//                  word 0  %globaltimer low 32 bits (ns) at kernel start
//                  word 1  %smid
//                  word 2  traces_used: event WORDS written (2 per event). Two forms:
//                          JAX >= 0.8.0 counts the event words only (jax commit 794de7abdb,
//                          2025-10-06: its dump's check became `used + 3 > entries`);
//                          JAX <= 0.7.2 counts the 3 header words too (3 + 2 per event; its
//                          check was `used > entries - 2`). The sidecar says which.
//                  word 3.. (tag, %clock) pairs; tag = name id | 1<<31 for a region's exit
//                Mosaic numbers blocks x-major: index = (bx * grid.y + by) * grid.z + bz.
//   PREFIX.json  {"format": "mosaic-gpu", "grid": [x, y, z], "block": [x, y, z],
//                 "entries_per_warpgroup": E, "trace_scope": "warpgroup" | "warp",
//                 "names": ["name of id 0", ...],
//                 "traces_used": "event_words" | "with_header", "bounds_check": false}
//                grid and block take 1 to 3 dimensions; "trace_scope" defaults to
//                "warpgroup" (what Mosaic wrote before it had the field); "kernel_name" is
//                optional (default: the prefix's file name); "traces_used" is word 2's form
//                (default "event_words", JAX >= 0.8.0; "with_header" for JAX <= 0.7.2);
//                "bounds_check" is ProfilerSpec's (after JAX 0.10.2, jax commit 61f14009ec;
//                e.g. 0.12.1): the device stops recording a trace at its capacity
//                (`record_event & (offset + 2 <= capacity)`; the offset stops too, so word 2
//                never exceeds E - 3 and the events it lost are not counted).
//
// What the conversion produces, one ABI record per Mosaic trace:
//   * capacity = (E - 3) / 2 events; attempted = event words / 2; the events as written.
//     A trace whose event words exceed E - 3 overflowed: Mosaic's own dump then refuses
//     the whole buffer ("Insufficient space to capture a full trace"). Here it becomes an
//     overflowed record (verify's verdict `overflowed`) that keeps its recorded prefix, and
//     a MosaicOverflow that says exactly how many entries it needed (3 + event words) and
//     how many words of the next trace's staging area its writes ran over. With
//     bounds_check the device wrote nothing past the slice and counted nothing either: a
//     trace that filled its slots with regions still open was truncated. It is a
//     MosaicOverflow (bounds_checked) whose entries_needed is a lower bound (the open regions'
//     ends; entries_needed_exact false), and verify's verdict for it is `truncated` (its
//     open regions). Mosaic's dump since then closes every trace's open regions with
//     synthetic ends instead of raising (MosaicTimestamps::close_truncated).
//   * The older header form (JAX <= 0.7.2) reads as the same records: its word 2 less the
//     3 header words. Its dump refused a trace whose word 2 exceeded E - 2, i.e. one with
//     E - 3 or E - 4 event words that the slice did hold; here those are complete, and an
//     overflow of that form names 5 + event words (what that dump accepts).
//   * Block ids are re-linearized x-fastest (warptrace's blockIdx.x + grid.x * (...)).
//   * Start globaltimer: Mosaic keeps only the low 32 bits (they wrap every 4.29 s). Starts
//     are unwrapped around the first non-empty trace's start (one launch spans < 2.1 s).
//   * Clock: Mosaic records no end stamps and no clock rate. Each record's start and end
//     globaltimer are both the trace's start, and start/end clock its first/last event, so
//     the timeline converts cycles at the layout's nominal SM clock
//     (MosaicImportOptions::sm_clock_khz) and says so; layout.clock.event_clock names the
//     rate used as well.
//   * Placement is kShared (Mosaic stages events in shared memory); every record is
//     complete (Mosaic writes the trace in its finalize step only).
//
// Where the timeline differs from Mosaic's own dump (profiler.py's ProfilerSpec.dump); the
// Chrome output ChromeEventStyle::kMosaic (profiler/outputs/mosaic_trace.h) writes Mosaic's
// numbers and events instead, from the same verified records:
//   * Its timestamps add SM cycles to a nanosecond start as if they were the same unit
//     (and wrap at 2^32 ns); here cycles are converted at the SM clock rate.
//   * It subtracts (event index x a globally estimated overhead) from every time; here the
//     overhead is measured per unit and compensated only on request.
//   * It clamps a clock that goes backwards to the previous time + 1 with a warning; here
//     verify reports it with coordinates.
//   * Its wraparound check (`if time < 0: break`, which would drop the whole trace)
//     compares a numpy uint32 and never fires, so it keeps every event; so does this.
//   * Overflow and unknown name ids make it fail (RuntimeError / KeyError); here they are
//     per-unit findings and the rest of the buffer is shown.
// For any buffer its dump accepts, the regions (name, nesting, which events open and close
// them, per trace) are exactly the same: tests/profiler/imports/mosaic_import_test.cc restates the
// dump's algorithm and compares.
//
//   LoadOptions options;
//   options.importers["mosaic-gpu"] = &ImportMosaicGpuTrace;
//   ASSIGN_OR_RETURN(LoadedTrace trace, LoadTrace("/tmp/attention", options));
//
// Thread-safety: all functions are reentrant.
#ifndef WARPTRACE_PROFILER_IMPORTS_MOSAIC_IMPORT_H_
#define WARPTRACE_PROFILER_IMPORTS_MOSAIC_IMPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/decode.h"

namespace warptrace {

inline constexpr char kMosaicSidecarFormat[] = "mosaic-gpu";
// Mosaic's per-trace header words: start globaltimer (low), smid, traces_used.
inline constexpr uint32_t kMosaicHeaderWords = 3;
// H100 / H200 SXM maximum SM clock, the GPUs Mosaic GPU targets.
inline constexpr uint64_t kMosaicDefaultSmClockKhz = 1'980'000;

// What Mosaic's header word 2 (traces_used) counts; the sidecar's "traces_used".
enum class MosaicUsedWord {
  kEventWords,  // "event_words": event words only (JAX >= 0.8.0; 2 per event, even)
  kWithHeader,  // "with_header": 3 + event words (JAX <= 0.7.2; odd, >= 3)
};
const char* MosaicUsedWordName(MosaicUsedWord form);  // "event_words", "with_header"
// Where JAX changed the form (jax commit 794de7abdb, 2025-10-06; first release 0.8.0).
inline constexpr char kMosaicEventWordsSinceJax[] = "0.8.0";

// The parsed PREFIX.json.
struct MosaicSidecar {
  Dim3 grid;
  Dim3 block;
  uint32_t entries_per_trace = 0;   // "entries_per_warpgroup"
  UnitKind scope = UnitKind::kWarpgroup;  // kWarpgroup or kWarp
  std::vector<std::string> names;   // by name id
  std::string kernel_name;          // empty when the sidecar has none
  MosaicUsedWord used_word = MosaicUsedWord::kEventWords;  // "traces_used"
  bool bounds_check = false;        // ProfilerSpec(bounds_check=True): truncated, not overrun
};

// Parses a "mosaic-gpu" sidecar. InvalidArgument: not JSON, not an object, "format" not
// "mosaic-gpu", a missing or mistyped field (named), a dimension of 0 or more than 3
// dimensions, an unknown trace_scope, a block size that is not a multiple of the trace
// scope's threads, entries_per_warpgroup < 5 (3 header words + one 2-word event), or a
// "traces_used" other than "event_words" / "with_header".
absl::StatusOr<MosaicSidecar> ParseMosaicSidecar(absl::string_view json);

struct MosaicImportOptions {
  // SM clock used to turn cycles into nanoseconds (recorded in the layout's
  // clock.nominal_sm_clock_khz). Must be > 0.
  uint64_t sm_clock_khz = kMosaicDefaultSmClockKhz;
  // Threads converting the buffer (blocks split into contiguous ranges; the result is the
  // same for any count). Buffers under ~1 MiB per thread use fewer.
  int threads = 1;
};

// A trace that needed more room than entries_per_warpgroup gave it.
struct MosaicOverflow {
  uint32_t block_linear = 0;       // warptrace's (x-fastest) linear block id
  Dim3 block_index;                // blockIdx
  uint32_t trace = 0;              // warpgroup or warp within the block
  uint32_t events_attempted = 0;   // event words / 2
  uint32_t events_kept = 0;        // capacity: the prefix that reached the buffer
  // The entries_per_warpgroup that fits: 3 + event words (the older form: 5 + event words,
  // what its dump's `used > entries - 2` accepts).
  uint64_t entries_needed = 0;
  // Words written past this trace's shared-memory slice of E words, i.e. over the start of
  // the next trace's slice (whose record may then be wrong), or past the profiler's buffer
  // for the block's last trace.
  uint64_t words_past_slice = 0;   // 0 with bounds_check
  bool bounds_checked = false;     // the device stopped recording: truncated, nothing overrun
  // false where the device did not count what it dropped (bounds_check): entries_needed is
  // then the least that could hold the trace (its open regions closed), not the exact size.
  bool entries_needed_exact = true;
  std::string message;             // one line a user can act on
};

struct MosaicImport {
  LoadedTrace trace;                      // layout + ABI buffer words
  std::vector<MosaicOverflow> overflows;  // in buffer order
};

// Converts Mosaic buffer words (host order) described by `sidecar`.
// InvalidArgument: options.sm_clock_khz is 0, or the layout it implies is invalid.
// DataLoss: `words` is not blocks x traces x E words long (expected vs actual, and the E
//   the actual size would imply), or a trace's traces_used does not fit the sidecar's form
//   (odd for "event_words"; even or < 3 for "with_header"), naming block and trace and
//   saying whether the whole buffer reads as the other form or fits neither.
absl::StatusOr<MosaicImport> ConvertMosaicBuffer(const MosaicSidecar& sidecar,
                                                 absl::Span<const uint32_t> words,
                                                 const MosaicImportOptions& options = {});

// Reads PREFIX.bin and converts it with the parsed `sidecar_json`. Errors as above, plus
// the file system's error naming PREFIX.bin, and DataLoss for a file size that is not a
// whole number of words. The kernel name defaults to the prefix's file name.
absl::StatusOr<MosaicImport> ImportMosaicGpu(absl::string_view prefix,
                                             absl::string_view sidecar_json,
                                             const MosaicImportOptions& options = {});

// The layout ConvertMosaicBuffer gives a buffer of `sidecar` (DecodeMosaicBuffer's `layout`).
// InvalidArgument as ConvertMosaicBuffer's.
absl::StatusOr<TraceLayout> MosaicTraceLayout(const MosaicSidecar& sidecar,
                                              const MosaicImportOptions& options = {});

// The dump's way in: a Mosaic buffer decoded where it lies. `out` is exactly what Decode
// makes of ConvertMosaicBuffer's words (the same records in the same warptrace block order,
// every field and event the same), but each record's events point into `words` itself: no
// converted copy is written and no checksum folded (Mosaic writes none; a converted record's
// always matches), so a dump holds the mapped input and its sinks' state, nothing the size
// of the buffer. Records' `header` is empty (no header of theirs can have a problem).
// `layout` is the one ConvertMosaicBuffer makes of `sidecar` (MosaicDecoded::layout);
// `overflows` gets its overflows, in the same order. Errors: ConvertMosaicBuffer's DataLoss,
// the same for the same buffer. `out` points into `words` and `layout`.
absl::Status DecodeMosaicBuffer(const MosaicSidecar& sidecar, const TraceLayout& layout,
                                absl::Span<const uint32_t> words, DecodedTrace& out,
                                std::vector<MosaicOverflow>& overflows);

// PREFIX.bin (mapped, read in place) decoded with the parsed `sidecar_json` by
// DecodeMosaicBuffer. Held by pointer: `decoded` points into `layout` and `words`.
struct MosaicDecoded {
  TraceLayout layout;                     // as ConvertMosaicBuffer's
  TraceWords words;                       // Mosaic's own words, not converted
  DecodedTrace decoded;
  std::vector<MosaicOverflow> overflows;  // in buffer order
};
// Errors: ImportMosaicGpu's, in the same order.
absl::StatusOr<std::unique_ptr<MosaicDecoded>> DecodeMosaicGpu(
    absl::string_view prefix, absl::string_view sidecar_json,
    const MosaicImportOptions& options = {});

// ImportMosaicGpu with default options, shaped as a sidecar.h SidecarImporter.
absl::StatusOr<LoadedTrace> ImportMosaicGpuTrace(absl::string_view prefix,
                                                 absl::string_view sidecar_json);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_IMPORTS_MOSAIC_IMPORT_H_
