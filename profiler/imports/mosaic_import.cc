#include "profiler/imports/mosaic_import.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/enum_table.h"
#include "base/file.h"
#include "base/parallel_ranges.h"
#include "base/status_macros.h"
#include "profiler/trace/decode.h"
#include "format/json_fields.h"
#include "format/trace_abi.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace warptrace {
namespace {

namespace json = llvm::json;

llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

absl::Status SidecarError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("Mosaic GPU sidecar: ", what));
}

uint32_t ScopeThreads(UnitKind scope) { return scope == UnitKind::kWarp ? 32 : 128; }

// blockIdx of Mosaic's x-major block index.
Dim3 MosaicBlockIndex(const Dim3& grid, uint64_t index) {
  Dim3 b;
  b.z = static_cast<uint32_t>(index % grid.z);
  b.y = static_cast<uint32_t>((index / grid.z) % grid.y);
  b.x = static_cast<uint32_t>(index / (uint64_t{grid.z} * grid.y));
  return b;
}

uint32_t WarptraceBlockLinear(const Dim3& grid, const Dim3& b) {
  return static_cast<uint32_t>(b.x + uint64_t{grid.x} * (b.y + uint64_t{grid.y} * b.z));
}

// Whether word 2 can be `form`'s: an even count of event words, or 3 + one.
bool FitsForm(MosaicUsedWord form, uint32_t used) {
  switch (form) {
    case MosaicUsedWord::kEventWords:
      return used % 2 == 0;
    case MosaicUsedWord::kWithHeader:
      return used % 2 == 1 && used >= kMosaicHeaderWords;
  }
  return false;
}

// The event words of a word 2 that fits `form`.
uint32_t EventWordsOf(MosaicUsedWord form, uint32_t used) {
  switch (form) {
    case MosaicUsedWord::kEventWords:
      return used;
    case MosaicUsedWord::kWithHeader:
      return used - kMosaicHeaderWords;
  }
  return used;
}

const char* JaxOfForm(MosaicUsedWord form) {
  switch (form) {
    case MosaicUsedWord::kEventWords:
      return "JAX >= 0.8.0";
    case MosaicUsedWord::kWithHeader:
      return "JAX <= 0.7.2";
  }
  return "";
}

}  // namespace

namespace {

constexpr EnumTable<MosaicUsedWord, 2> kMosaicUsedWords{"Mosaic traces_used", {{
    {MosaicUsedWord::kEventWords, "event_words"},
    {MosaicUsedWord::kWithHeader, "with_header"},
}}};
static_assert(kMosaicUsedWords.Covers(2));

}  // namespace

const char* MosaicUsedWordName(MosaicUsedWord form) { return kMosaicUsedWords.Name(form); }

absl::StatusOr<MosaicSidecar> ParseMosaicSidecar(absl::string_view text) {
  llvm::Expected<json::Value> value = json::parse(Ref(text));
  if (!value) {
    return SidecarError(absl::StrCat("not valid JSON: ", llvm::toString(value.takeError())));
  }
  const json::Object* o = value->getAsObject();
  if (o == nullptr) return SidecarError("the top level must be a JSON object");
  const llvm::Optional<llvm::StringRef> format = o->getString("format");
  if (!format || *format != kMosaicSidecarFormat) {
    return SidecarError(absl::StrCat("\"format\" must be \"", kMosaicSidecarFormat, "\", got ",
                                     format ? absl::StrCat("\"", format->str(), "\"")
                                            : std::string("none")));
  }
  MosaicSidecar s;
  const JsonFields fields(*o, "", "Mosaic GPU sidecar");
  ASSIGN_OR_RETURN(s.grid, fields.Dims("grid", /*min_elements=*/1, /*min_value=*/1));
  ASSIGN_OR_RETURN(s.block, fields.Dims("block", /*min_elements=*/1, /*min_value=*/1));
  ASSIGN_OR_RETURN(const uint64_t entries, fields.Unsigned("entries_per_warpgroup"));
  if (entries < kMosaicHeaderWords + 2) {
    return SidecarError(absl::StrFormat(
        "entries_per_warpgroup is %d: it must be >= 5 (3 header words and one 2-word event)",
        entries));
  }
  s.entries_per_trace = static_cast<uint32_t>(entries);
  if (fields.Has("trace_scope")) {
    ASSIGN_OR_RETURN(const std::string name, fields.String("trace_scope"));
    if (name == "warpgroup") {
      s.scope = UnitKind::kWarpgroup;
    } else if (name == "warp") {
      s.scope = UnitKind::kWarp;
    } else {
      return SidecarError("\"trace_scope\" must be \"warpgroup\" or \"warp\"");
    }
  }
  ASSIGN_OR_RETURN(s.names, fields.Strings("names"));
  if (fields.Has("kernel_name")) {
    ASSIGN_OR_RETURN(s.kernel_name, fields.String("kernel_name"));
  }
  if (fields.Has("traces_used")) {
    ASSIGN_OR_RETURN(const std::string form, fields.String("traces_used"));
    if (form == MosaicUsedWordName(MosaicUsedWord::kEventWords)) {
      s.used_word = MosaicUsedWord::kEventWords;
    } else if (form == MosaicUsedWordName(MosaicUsedWord::kWithHeader)) {
      s.used_word = MosaicUsedWord::kWithHeader;
    } else {
      return SidecarError(absl::StrCat(
          "\"traces_used\" must be \"event_words\" (JAX >= ", kMosaicEventWordsSinceJax,
          ") or \"with_header\" (older JAX), got \"", form, "\""));
    }
  }
  if (fields.Has("bounds_check")) {
    ASSIGN_OR_RETURN(s.bounds_check, fields.Bool("bounds_check"));
  }
  const uint32_t scope_threads = ScopeThreads(s.scope);
  if (s.block.Count() % scope_threads != 0) {
    return SidecarError(absl::StrFormat(
        "block (%d,%d,%d) has %d threads, not a multiple of the %s size %d", s.block.x,
        s.block.y, s.block.z, s.block.Count(), UnitKindName(s.scope), scope_threads));
  }
  return s;
}

namespace {

// The TraceLayout a Mosaic GPU buffer converts to.
absl::StatusOr<TraceLayout> MosaicLayout(const MosaicSidecar& sidecar,
                                         const MosaicImportOptions& options) {
  const uint32_t e = sidecar.entries_per_trace;
  TraceLayout layout;
  layout.kernel_name = sidecar.kernel_name;
  layout.device_name = "unknown (Mosaic GPU buffer)";
  layout.grid = sidecar.grid;
  layout.block = sidecar.block;
  layout.unit = sidecar.scope == UnitKind::kWarp ? UnitSpec::Warp() : UnitSpec::Warpgroup();
  layout.capacity = (e - kMosaicHeaderWords) / abi::kEventWords;
  layout.placement = Placement::kShared;
  layout.clock.nominal_sm_clock_khz = options.sm_clock_khz;
  layout.clock.event_clock = absl::StrFormat(
      "clock; Mosaic GPU buffer (no end stamps, no clock rate): cycles converted at %.1f MHz",
      static_cast<double>(options.sm_clock_khz) / 1000.0);
  for (size_t i = 0; i < sidecar.names.size(); ++i) {
    layout.sites.push_back({static_cast<uint32_t>(i), sidecar.names[i], SiteKind::kRegion,
                            "mosaic-gpu name id " + std::to_string(i)});
  }
  RETURN_IF_ERROR(ValidateLayout(layout));
  return layout;
}

// What became of a trace that recorded more than its slice holds.
// `used` is the trace's event words.
MosaicOverflow OverflowOf(const MosaicSidecar& sidecar, const TraceLayout& layout,
                          uint32_t block_linear, const Dim3& b, uint32_t t, uint32_t used) {
  const uint32_t e = sidecar.entries_per_trace;
  const uint32_t traces = UnitsPerBlock(layout);
  const uint32_t attempted = used / 2;
  const uint32_t kept = attempted < layout.capacity ? attempted : layout.capacity;
  MosaicOverflow o;
  o.block_linear = block_linear;
  o.block_index = b;
  o.trace = t;
  o.events_attempted = attempted;
  o.events_kept = kept;
  // The older form's dump refuses word 2 (3 + used) > E - 2: it needs E >= used + 5.
  o.entries_needed = uint64_t{used} + (sidecar.used_word == MosaicUsedWord::kWithHeader
                                           ? kMosaicHeaderWords + 2
                                           : kMosaicHeaderWords);
  o.bounds_checked = sidecar.bounds_check;
  // Events are staged from word 0 of the trace's E-word shared-memory slice: writes past
  // used > E words ran into the next slice, unless bounds_check stopped them.
  o.words_past_slice = !sidecar.bounds_check && used > e ? used - e : 0;
  o.message = absl::StrFormat(
      "block (%d,%d,%d) %s %d recorded %d events (%d words) but entries_per_warpgroup = "
      "%d holds %d: the first %d are kept, %d were %s; set entries_per_warpgroup >= "
      "%d",
      b.x, b.y, b.z, UnitKindName(sidecar.scope), t, attempted, used, e,
      layout.capacity, kept, attempted - kept,
      sidecar.bounds_check ? "not recorded (bounds_check: the trace is truncated)" : "lost",
      o.entries_needed);
  if (o.words_past_slice > 0) {
    absl::StrAppendFormat(
        &o.message,
        "; its writes ran %d words past its shared-memory slice, %s", o.words_past_slice,
        t + 1 < traces
            ? absl::StrFormat("over the start of %s %d's events, whose trace may be wrong",
                              UnitKindName(sidecar.scope), t + 1)
            : std::string("past the profiler's shared buffer"));
  }
  return o;
}

// With bounds_check, a trace that filled its slots with regions still open: the device
// stopped recording (and counting) it there. `used` is its event words.
std::optional<MosaicOverflow> BoundsCheckedTruncation(const MosaicSidecar& sidecar,
                                                      const TraceLayout& layout,
                                                      uint32_t block_linear, const Dim3& b,
                                                      uint32_t t, const uint32_t* in,
                                                      uint32_t used) {
  if (!sidecar.bounds_check || used / 2 != layout.capacity || layout.capacity == 0) {
    return std::nullopt;
  }
  uint32_t open = 0;
  for (uint32_t k = 0; k < layout.capacity; ++k) {
    if ((in[kMosaicHeaderWords + 2 * k] & abi::kExitFlag) == 0) {
      ++open;
    } else if (open > 0) {
      --open;
    }
  }
  if (open == 0) return std::nullopt;
  MosaicOverflow o;
  o.block_linear = block_linear;
  o.block_index = b;
  o.trace = t;
  o.events_attempted = layout.capacity;  // what the device counted: no more
  o.events_kept = layout.capacity;
  o.bounds_checked = true;
  o.entries_needed_exact = false;
  o.entries_needed = uint64_t{kMosaicHeaderWords} + used + 2 * uint64_t{open};
  o.message = absl::StrFormat(
      "block (%d,%d,%d) %s %d filled all %d event slots of entries_per_warpgroup = %d with "
      "%d region%s still open: bounds_check stopped recording it there (the trace is "
      "truncated, and the events it lost were not counted); set entries_per_warpgroup >= "
      "%d at least (that only closes the open regions)",
      b.x, b.y, b.z, UnitKindName(sidecar.scope), t, layout.capacity,
      sidecar.entries_per_trace, open, open == 1 ? "" : "s", o.entries_needed);
  return o;
}

// Mosaic trace `in` (its header, then its event words) as warptrace record `r`: the header
// a recorder would write (version 3, complete, its checksum folding the events kept), the
// first min(traces_used / 2, capacity) events, zeros in the slots after them. Every word of
// the record is written.
// `used` is the trace's word 2 read in the sidecar's form: its event words.
void WriteRecord(const uint32_t* in, uint32_t used, uint32_t block_linear, uint32_t unit,
                 uint32_t capacity, uint64_t start_ns, uint32_t* r) {
  const uint32_t attempted = used / 2;
  const uint32_t kept = attempted < capacity ? attempted : capacity;
  abi::RecordHeader h{};
  h.magic = abi::kTraceMagic;
  h.version = abi::kTraceVersion;
  h.sm_id = in[1];
  h.block_linear = block_linear;
  h.unit_index = unit;
  h.attempted = attempted;
  h.capacity = capacity;
  h.flags = abi::kFlagComplete | abi::kFlagShared;
  h.start_clock = kept > 0 ? in[kMosaicHeaderWords + 1] : 0;
  h.end_clock = kept > 0 ? in[kMosaicHeaderWords + 2 * (kept - 1) + 1] : 0;
  h.start_globaltimer_lo = static_cast<uint32_t>(start_ns);
  h.start_globaltimer_hi = static_cast<uint32_t>(start_ns >> 32);
  h.end_globaltimer_lo = h.start_globaltimer_lo;
  h.end_globaltimer_hi = h.start_globaltimer_hi;
  h.header_words = abi::kHeaderWords;
  // Version 3: the checksum covers the copied events too (trace_abi.h), so a record
  // converted here reads as one the recorder wrote.
  h.checksum = abi::FoldEventSlots(
      abi::HeaderChecksum(h.magic, h.version, h.sm_id, h.block_linear, h.unit_index, h.capacity),
      in + kMosaicHeaderWords, kept);
  std::memcpy(r, &h, sizeof(h));
  const uint64_t event_words = uint64_t{abi::kEventWords} * kept;
  std::memcpy(r + abi::kHeaderWords, in + kMosaicHeaderWords, sizeof(uint32_t) * event_words);
  std::memset(r + abi::kHeaderWords + event_words, 0,
              sizeof(uint32_t) * (abi::RecordWords(capacity) - abi::kHeaderWords - event_words));
}

// What converting and decoding in place share: the buffer's size checked against the
// sidecar, and the reference its 32-bit start times are unwrapped around.
struct MosaicFrame {
  uint64_t blocks = 0;
  uint32_t traces = 0;  // per block
  int64_t reference = 0;
  uint32_t reference_lo = 0;

  // The start globaltimer (ns) of the trace whose header word 0 is `start_lo`.
  uint64_t Start(uint32_t start_lo) const {
    return static_cast<uint64_t>(reference + static_cast<int32_t>(start_lo - reference_lo));
  }
};

absl::StatusOr<MosaicFrame> FrameOf(const MosaicSidecar& sidecar, const TraceLayout& layout,
                                    absl::Span<const uint32_t> words) {
  const uint32_t e = sidecar.entries_per_trace;
  MosaicFrame f;
  f.blocks = layout.grid.Count();
  f.traces = UnitsPerBlock(layout);
  const uint64_t expected = f.blocks * f.traces * e;
  if (words.size() != expected) {
    const uint64_t all_traces = f.blocks * f.traces;
    std::string hint;
    if (words.size() % all_traces == 0) {
      hint = absl::StrFormat("; that is %d words per trace: was entries_per_warpgroup %d?",
                             words.size() / all_traces, words.size() / all_traces);
    }
    return absl::DataLossError(absl::StrFormat(
        "Mosaic GPU buffer has %d words; grid (%d,%d,%d) x %d %ss per block x "
        "entries_per_warpgroup %d needs %d%s",
        words.size(), layout.grid.x, layout.grid.y, layout.grid.z, f.traces,
        UnitKindName(sidecar.scope), e, expected, hint));
  }
  // Unwrap the 32-bit start times around the first non-empty trace's start.
  for (uint64_t t = 0; t < f.blocks * f.traces; ++t) {
    const uint32_t used = words[t * e + 2];
    if (FitsForm(sidecar.used_word, used) && EventWordsOf(sidecar.used_word, used) != 0) {
      f.reference_lo = words[t * e];
      break;
    }
  }
  // Keep every start positive: 2^32 ns of headroom below the reference.
  f.reference = (int64_t{1} << 32) + f.reference_lo;
  return f;
}

// The error for trace t of block b, whose word 2 `used` does not fit the sidecar's form:
// what the whole buffer reads as instead.
absl::Status FormError(const MosaicSidecar& sidecar, absl::Span<const uint32_t> words,
                       const Dim3& b, uint32_t t, uint32_t used) {
  const MosaicUsedWord form = sidecar.used_word;
  const MosaicUsedWord other = form == MosaicUsedWord::kEventWords
                                   ? MosaicUsedWord::kWithHeader
                                   : MosaicUsedWord::kEventWords;
  const uint32_t e = sidecar.entries_per_trace;
  bool fits_other = true;
  for (uint64_t i = 2; i < words.size() && fits_other; i += e) {
    fits_other = FitsForm(other, words[i]);
  }
  const std::string what = absl::StrFormat(
      "Mosaic GPU buffer: block (%d,%d,%d) %s %d has traces_used = %d, which the sidecar's "
      "form \"%s\" (%s: %s) cannot be",
      b.x, b.y, b.z, UnitKindName(sidecar.scope), t, used, MosaicUsedWordName(form),
      JaxOfForm(form),
      form == MosaicUsedWord::kEventWords ? "an even count of event words"
                                          : "3 header words + an even count of event words");
  if (fits_other) {
    return absl::DataLossError(absl::StrFormat(
        "%s; every trace of the buffer reads as the other form, \"%s\" (%s): give the sidecar "
        "\"traces_used\": \"%s\"",
        what, MosaicUsedWordName(other), JaxOfForm(other), MosaicUsedWordName(other)));
  }
  return absl::DataLossError(absl::StrFormat(
      "%s; the buffer fits neither form of Mosaic's header (event words, JAX >= 0.8.0, or "
      "3 + event words, JAX <= 0.7.2): not a Mosaic GPU profiler buffer of this sidecar, or "
      "a corrupted one",
      what));
}

// PREFIX.bin's little-endian words: read in place from the mapping on a little-endian host
// (a mapping is page aligned), else copied into host order.
absl::StatusOr<TraceWords> ReadMosaicWords(absl::string_view prefix) {
  const std::string path = absl::StrCat(prefix, ".bin");
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> file,
                   MapFile(path, {.role = "Mosaic GPU buffer"}));
  const llvm::StringRef bytes = file->getBuffer();
  if (bytes.size() % 4 != 0) {
    return absl::DataLossError(absl::StrFormat(
        "Mosaic GPU buffer %s is %d bytes, not a whole number of 4-byte words", path,
        bytes.size()));
  }
  if (llvm::sys::IsLittleEndianHost &&
      reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint32_t) == 0) {
    return TraceWords(std::move(file));
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  for (size_t i = 0; i < words.size(); ++i) {
    words[i] = llvm::support::endian::read32le(bytes.data() + 4 * i);
  }
  return TraceWords(std::move(words));
}

absl::Status CheckClock(const MosaicImportOptions& options) {
  if (options.sm_clock_khz == 0) {
    return absl::InvalidArgumentError(
        "Mosaic GPU import: the SM clock must be > 0 kHz (Mosaic records no clock rate)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MosaicImport> ConvertMosaicBuffer(const MosaicSidecar& sidecar,
                                                 absl::Span<const uint32_t> words,
                                                 const MosaicImportOptions& options) {
  RETURN_IF_ERROR(CheckClock(options));
  MosaicImport out;
  ASSIGN_OR_RETURN(out.trace.layout, MosaicLayout(sidecar, options));
  const TraceLayout& layout = out.trace.layout;
  ASSIGN_OR_RETURN(const MosaicFrame frame, FrameOf(sidecar, layout, words));
  const uint32_t e = sidecar.entries_per_trace;
  const uint64_t blocks = frame.blocks;
  const uint32_t traces = frame.traces;

  // Every word of every record is written below (header, the events kept, zeros after
  // them), so the buffer is not zeroed first; blocks are converted on `threads` threads,
  // each a contiguous range of Mosaic's blocks, and their overflows joined in block order.
  const uint64_t record_words = abi::RecordWords(layout.capacity);
  uint32_t* buffer = nullptr;
  TraceWords converted = TraceWords::ForWriting(record_words * blocks * traces, &buffer);
  const size_t pieces = RangePieces(options.threads, words.size(), blocks);
  std::vector<std::vector<MosaicOverflow>> overflows(pieces);
  auto convert = [&](uint64_t first_block, uint64_t end_block, size_t piece) -> absl::Status {
    for (uint64_t m = first_block; m < end_block; ++m) {
      const Dim3 b = MosaicBlockIndex(layout.grid, m);
      const uint32_t block_linear = WarptraceBlockLinear(layout.grid, b);
      for (uint32_t t = 0; t < traces; ++t) {
        const uint32_t* in = words.data() + (m * traces + t) * e;
        if (!FitsForm(sidecar.used_word, in[2])) return FormError(sidecar, words, b, t, in[2]);
        const uint32_t used = EventWordsOf(sidecar.used_word, in[2]);
        WriteRecord(in, used, block_linear, t, layout.capacity, frame.Start(in[0]),
                    buffer + (uint64_t{block_linear} * traces + t) * record_words);
        const uint32_t attempted = used / 2;
        if (attempted > layout.capacity) {
          overflows[piece].push_back(OverflowOf(sidecar, layout, block_linear, b, t, used));
        } else if (std::optional<MosaicOverflow> o =
                       BoundsCheckedTruncation(sidecar, layout, block_linear, b, t, in, used)) {
          overflows[piece].push_back(std::move(*o));
        }
      }
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ParallelRanges(blocks, pieces, convert));
  for (const std::vector<MosaicOverflow>& piece : overflows) {
    out.overflows.insert(out.overflows.end(), piece.begin(), piece.end());
  }
  out.trace.words = std::move(converted);
  return out;
}

absl::StatusOr<TraceLayout> MosaicTraceLayout(const MosaicSidecar& sidecar,
                                              const MosaicImportOptions& options) {
  RETURN_IF_ERROR(CheckClock(options));
  return MosaicLayout(sidecar, options);
}

absl::Status DecodeMosaicBuffer(const MosaicSidecar& sidecar, const TraceLayout& layout,
                                absl::Span<const uint32_t> words, DecodedTrace& out,
                                std::vector<MosaicOverflow>& overflows) {
  ASSIGN_OR_RETURN(const MosaicFrame frame, FrameOf(sidecar, layout, words));
  const uint32_t e = sidecar.entries_per_trace;
  const uint32_t traces = frame.traces;
  // Mosaic's order first, as ConvertMosaicBuffer meets them: the first odd trace is the
  // error, and the overflows are listed in that order.
  overflows.clear();
  for (uint64_t m = 0; m < frame.blocks; ++m) {
    for (uint32_t t = 0; t < traces; ++t) {
      const uint32_t* in = words.data() + (m * traces + t) * e;
      const bool fits = FitsForm(sidecar.used_word, in[2]);
      const uint32_t used = EventWordsOf(sidecar.used_word, in[2]);
      if (fits && used / 2 < layout.capacity) continue;
      const Dim3 b = MosaicBlockIndex(layout.grid, m);
      if (!fits) return FormError(sidecar, words, b, t, in[2]);
      if (used / 2 == layout.capacity) {
        if (std::optional<MosaicOverflow> o = BoundsCheckedTruncation(
                sidecar, layout, WarptraceBlockLinear(layout.grid, b), b, t, in, used)) {
          overflows.push_back(std::move(*o));
        }
        continue;
      }
      overflows.push_back(
          OverflowOf(sidecar, layout, WarptraceBlockLinear(layout.grid, b), b, t, used));
    }
  }
  // Then the records in warptrace's block order, each what Decode reads from the record
  // WriteRecord makes of the trace: complete, version 3, its kept events in place.
  const uint64_t xy = uint64_t{layout.grid.x} * layout.grid.y;
  out.layout = &layout;
  out.records.clear();
  out.records.resize(frame.blocks * traces);
  out.total_events = 0;
  for (uint64_t r = 0; r < out.records.size(); ++r) {
    DecodedRecord& rec = out.records[r];
    const uint64_t linear = SampledBlockId(layout, r / traces);
    const uint32_t t = static_cast<uint32_t>(r % traces);
    const uint64_t bx = linear % layout.grid.x;
    const uint64_t by = (linear / layout.grid.x) % layout.grid.y;
    const uint64_t bz = linear / xy;
    const uint64_t m = (bx * layout.grid.y + by) * layout.grid.z + bz;
    const uint32_t* in = words.data() + (m * traces + t) * e;
    const uint32_t attempted = EventWordsOf(sidecar.used_word, in[2]) / 2;
    const uint32_t kept = attempted < layout.capacity ? attempted : layout.capacity;
    rec.record_index = r;
    rec.block_linear = static_cast<uint32_t>(linear);
    rec.unit_index = t;
    rec.header = {};  // Mosaic's 3 words are not a record header; none has a problem
    rec.header_problem = HeaderProblem::kNone;
    rec.version = abi::kTraceVersion;
    rec.sm_id = in[1];
    rec.attempted = attempted;
    rec.capacity = layout.capacity;
    rec.flags = abi::kFlagComplete | abi::kFlagShared;
    rec.start_clock = kept > 0 ? in[kMosaicHeaderWords + 1] : 0;
    rec.end_clock = kept > 0 ? in[kMosaicHeaderWords + 2 * (kept - 1) + 1] : 0;
    rec.start_globaltimer = rec.end_globaltimer = frame.Start(in[0]);
    rec.events = absl::Span<const abi::Event>(
        reinterpret_cast<const abi::Event*>(in + kMosaicHeaderWords), kept);
    rec.events_recovered = false;
    out.total_events += kept;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MosaicDecoded>> DecodeMosaicGpu(
    absl::string_view prefix, absl::string_view sidecar_json,
    const MosaicImportOptions& options) {
  // In ImportMosaicGpu's order, so that a buffer fails with the same error either way.
  ASSIGN_OR_RETURN(MosaicSidecar sidecar, ParseMosaicSidecar(sidecar_json));
  if (sidecar.kernel_name.empty()) {
    sidecar.kernel_name = llvm::sys::path::filename(Ref(prefix)).str();
  }
  auto decoded = std::make_unique<MosaicDecoded>();
  ASSIGN_OR_RETURN(decoded->words, ReadMosaicWords(prefix));
  ASSIGN_OR_RETURN(decoded->layout, MosaicTraceLayout(sidecar, options));
  RETURN_IF_ERROR(DecodeMosaicBuffer(sidecar, decoded->layout, decoded->words,
                                     decoded->decoded, decoded->overflows));
  return decoded;
}

absl::StatusOr<MosaicImport> ImportMosaicGpu(absl::string_view prefix,
                                             absl::string_view sidecar_json,
                                             const MosaicImportOptions& options) {
  ASSIGN_OR_RETURN(MosaicSidecar sidecar, ParseMosaicSidecar(sidecar_json));
  if (sidecar.kernel_name.empty()) {
    sidecar.kernel_name = llvm::sys::path::filename(Ref(prefix)).str();
  }
  ASSIGN_OR_RETURN(const TraceWords words, ReadMosaicWords(prefix));
  return ConvertMosaicBuffer(sidecar, words, options);
}

absl::StatusOr<LoadedTrace> ImportMosaicGpuTrace(absl::string_view prefix,
                                                 absl::string_view sidecar_json) {
  ASSIGN_OR_RETURN(MosaicImport imported, ImportMosaicGpu(prefix, sidecar_json));
  return std::move(imported.trace);
}

}  // namespace warptrace
