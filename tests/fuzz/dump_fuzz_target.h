// Test-only: the dump fuzz target. One input runs the dump side of warptrace — a raw buffer
// or a sidecar through decode, verify, timeline, the Chrome trace writer, the verdict report
// and the summary, or a Mosaic GPU buffer through the importer and then the same path — and
// checks what the headers promise, not only that nothing crashes.
//
// Used by three binaries (tests/fuzz/BUILD): the libFuzzer target dump_fuzzer
// (LLVMFuzzerTestOneInput in dump_fuzzer.cc, --config=fuzz), the same binary built without
// libFuzzer as a corpus replayer, and the smoke test that runs the seed corpus and a few
// thousand deterministic mutations of it in the normal test suite.
//
// Input format. Byte 0 is the mode (low 2 bits) and option flags; what follows depends on
// the mode. All multi-byte fields are little-endian; a field past the end of the input reads
// as 0, so every byte string is a valid input.
//
//   mode 0, kBuffer: a TraceLayout from BufferParams' fixed header (kBufferHeaderBytes, see
//     EncodeBufferInput for the field order), then the buffer's words. Unless
//     kFlagExactSize is set the words are zero-padded or cut to the layout's buffer size, so
//     mutations reach verify instead of stopping at decode's size check.
//   mode 1, kSidecarJson: the rest is the text of a PREFIX.json sidecar (ParseLayoutJson).
//   mode 2, kMosaicBuffer: MosaicParams' fixed header (kMosaicHeaderBytes), then Mosaic
//     buffer words (zero-padded or cut unless kFlagExactSize). The sidecar JSON is built from
//     the params and parsed with ParseMosaicSidecar, as the CLI would.
//   mode 3, kMosaicJson: the rest is the text of a "mosaic-gpu" sidecar (ParseMosaicSidecar).
//
// Flags in byte 0 (bits 2..7): allow_truncated, compensate_overhead, B/E Chrome events,
// exact size, placement shared, and site names with invalid UTF-8 and JSON metacharacters.
//
// What is checked (a violation is an Internal status naming the invariant):
//   * error codes are the documented ones: Decode's InvalidArgument exactly when the layout
//     fails ValidateLayout, DataLoss for a buffer that does not fit; sidecar/Mosaic parsers
//     fail only with InvalidArgument, the Mosaic converter with InvalidArgument/DataLoss;
//   * decode: one record per buffer position, coordinates from the position, events within
//     capacity, no events for a record with a header problem;
//   * verify: one verdict per record, counts that add up, kept events within each record's
//     events, ok() == (errors == 0) == ToStatus().ok() with ResourceExhausted/DataLoss
//     otherwise; a strict report that is ok has every unit complete and keeps every event;
//   * timeline (built whenever the report is ok or repaired): one unit per record, every
//     slice inside its unit and the timeline, end >= begin, ordered by (begin, depth), each
//     slice's depth the number of open slices enclosing it, and the multiset of
//     (site, depth, repaired) slices exactly the one the kept events' nesting implies;
//   * outputs: WriteChromeTrace accepts every timeline BuildTimeline makes, its output parses
//     back with llvm::json::parse with one X (or one B and one E) per slice, numeric
//     ts/dur >= 0; the verdict report parses and agrees with the report; Summarize succeeds
//     and counts every slice once;
//   * the dump driver with streaming sinks (the CLI's way: Chrome trace, summary) against
//     the in-memory collector (CollectTrace, RunKernel's way), with no exceptions: the same
//     report, the same error when strict verification fails, and otherwise the same Chrome
//     trace byte for byte (otherData and clock note included), the same summary; and the
//     collected Timeline equals what Verify and BuildTimeline build over the whole trace;
//   * sidecars: a layout ParseLayoutJson accepts passes ValidateLayout and round-trips
//     through WriteLayoutJson unchanged; Mosaic conversions give a valid layout, a buffer of
//     exactly its size, and one dropped-events finding per reported overflow.
// Inputs whose buffer would exceed kMaxFuzzWords words are skipped (OK), to keep each run
// fast.
#ifndef WARPTRACE_TESTS_FUZZ_DUMP_FUZZ_TARGET_H_
#define WARPTRACE_TESTS_FUZZ_DUMP_FUZZ_TARGET_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"

namespace warptrace::fuzz {

enum class FuzzMode : uint8_t {
  kBuffer = 0,
  kSidecarJson = 1,
  kMosaicBuffer = 2,
  kMosaicJson = 3,
};

// Flags of byte 0.
inline constexpr uint8_t kFlagAllowTruncated = 1u << 2;
inline constexpr uint8_t kFlagCompensateOverhead = 1u << 3;
inline constexpr uint8_t kFlagBeginEnd = 1u << 4;
inline constexpr uint8_t kFlagExactSize = 1u << 5;
inline constexpr uint8_t kFlagShared = 1u << 6;
inline constexpr uint8_t kFlagOddNames = 1u << 7;

// Largest buffer (in 32-bit words) an input may describe; larger ones are skipped.
inline constexpr uint64_t kMaxFuzzWords = uint64_t{1} << 16;

// The layout knobs of a kBuffer input. Field widths are the encoded ones.
struct BufferParams {
  uint8_t flags = 0;  // kFlag* (the mode bits are added by EncodeBufferInput)
  uint8_t unit_kind = 0;  // UnitKind, taken mod 4
  uint16_t grid_x = 1;
  uint8_t grid_y = 1, grid_z = 1;
  uint16_t block_x = 32;
  uint8_t block_y = 1, block_z = 1;
  uint16_t custom_first = 0, custom_count = 0;
  uint8_t custom_recorder = 0;
  uint16_t capacity = 1;
  uint8_t num_sites = 1;            // sites 0..n-1, names "s<i mod 5>", kinds cycling
  uint16_t sample_begin = 0;
  uint16_t sample_end = 0xffff;     // 0xffff means UINT32_MAX (the whole grid)
  uint8_t sample_stride = 1;
  uint8_t num_sms = 0;
  uint32_t nominal_sm_clock_khz = 1'500'000;
  uint16_t min_calibration_100ns = 200;  // TimelineOptions::min_calibration_ns / 100
};
inline constexpr size_t kBufferHeaderBytes = 1 + 29;

// The knobs of a kMosaicBuffer input.
struct MosaicParams {
  uint8_t flags = 0;
  uint8_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint16_t block_x = 128;
  uint8_t block_y = 1, block_z = 1;
  uint16_t entries = 5;   // entries_per_warpgroup
  uint8_t warp_scope = 0; // 1: "trace_scope": "warp"
  uint8_t num_names = 1;
  uint32_t sm_clock_khz = 1'980'000;
};
inline constexpr size_t kMosaicHeaderBytes = 1 + 15;

// The layout a kBuffer input with `params` decodes with (sites, names and clock included).
TraceLayout LayoutFromParams(const BufferParams& params);
// The params that reproduce `layout`'s shape (sites become num_sites generic sites; names and
// origins are not kept). Fields that do not fit their encoded width are clamped.
BufferParams ParamsFromLayout(const TraceLayout& layout, uint8_t flags);

std::string EncodeBufferInput(const BufferParams& params, absl::Span<const uint32_t> words);
std::string EncodeMosaicInput(const MosaicParams& params, absl::Span<const uint32_t> words);
// kSidecarJson or kMosaicJson with `text`; `flags` as for the other modes.
std::string EncodeTextInput(FuzzMode mode, uint8_t flags, absl::string_view text);

// How far inputs got, summed over runs: lets the smoke test prove that its inputs reach
// every stage instead of stopping at the first check.
struct FuzzStages {
  uint64_t inputs = 0;
  uint64_t skipped_large = 0;      // buffers over kMaxFuzzWords
  uint64_t rejected = 0;           // a parser, the importer or CollectTrace said no
  uint64_t analyzed = 0;           // CollectTrace succeeded
  uint64_t strict_failed = 0;      // analyzed, strict verification found errors
  uint64_t timelines = 0;          // a timeline was built and written
  uint64_t slices = 0;             // slices on those timelines
  uint64_t repaired_units = 0;     // units allow_truncated repaired
  uint64_t sidecars_parsed = 0;    // ParseLayoutJson accepted the text
  uint64_t mosaic_converted = 0;   // ConvertMosaicBuffer succeeded
  uint64_t mosaic_overflows = 0;   // overflowed Mosaic traces among them
  uint64_t handoff_findings = 0;   // hand-off findings (verify.h's block pass)
  uint64_t flows = 0;              // flows on the timelines (each counted at its source)
};

// Runs one input (see above). OK when the code kept every contract checked, whatever it
// thought of the input; Internal, naming the broken invariant, otherwise. Adds to `stages`
// when given.
absl::Status RunDumpFuzzInput(absl::Span<const uint8_t> data, FuzzStages* stages = nullptr);

}  // namespace warptrace::fuzz

#endif  // WARPTRACE_TESTS_FUZZ_DUMP_FUZZ_TARGET_H_
