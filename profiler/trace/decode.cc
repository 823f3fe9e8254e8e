#include "profiler/trace/decode.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/enum_table.h"
#include "base/parallel_ranges.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

std::atomic<uint64_t> decode_count{0};
internal::DecodeRecordHook decode_record_hook = nullptr;

// Header word indices (trace_abi.h's RecordHeader, one uint32 each).
enum : uint32_t {
  kMagic = 0,
  kVersion,
  kSmId,
  kBlockLinear,
  kUnitIndex,
  kAttempted,
  kCapacity,
  kFlags,
  kStartClock,
  kEndClock,
  kStartGtLo,
  kStartGtHi,
  kEndGtLo,
  kEndGtHi,
  kHeaderWordsField,
  kChecksum,
};
static_assert(kChecksum + 1 == abi::kHeaderWords);

bool AllZero(const uint32_t* w, uint64_t n) {
  uint32_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) acc |= w[i];
  return acc == 0;
}

// Whether the record's checksum word covers its events (trace_abi.h, version 3).
bool FoldsEvents(const uint32_t* h) {
  return h[kVersion] >= abi::kEventChecksumVersion && (h[kFlags] & abi::kFlagComplete) != 0;
}

// The checksum word the record's words imply: the identity words' checksum (from `h`, the
// header's copy), folded for a complete version-3 record with its min(attempted, capacity)
// stored slots (at `slots`, in the buffer) as the header states them, never reading past
// `end` (the buffer's end; a header that overstates its slots then simply mismatches).
uint32_t ExpectedChecksum(const uint32_t* h, const uint32_t* slots, const uint32_t* end) {
  const uint32_t header = abi::HeaderChecksum(h[kMagic], h[kVersion], h[kSmId],
                                              h[kBlockLinear], h[kUnitIndex], h[kCapacity]);
  if (!FoldsEvents(h)) return header;
  uint64_t n = h[kAttempted] < h[kCapacity] ? h[kAttempted] : h[kCapacity];
  const uint64_t available = static_cast<uint64_t>(end - slots) / abi::kEventWords;
  if (n > available) n = available;
  return abi::FoldEventSlots(header, slots, n);
}

// Record `r` (its header at `at`; `end` is the buffer's end) into `rec`, its events counted
// into `events`. DataLoss when a header otherwise sound says another capacity.
//
// The caller's buffer may change while it is decoded (a Python buffer is read in place, and
// another thread may write it): every header word is read once, into rec.header, and every
// decision and field comes from that copy; the slots the record may use are bounded by the
// layout's capacity, not by a word read again. A buffer changed underneath gives a verdict
// (a bad checksum, a clock going back, ...), never a read outside the record.
absl::Status DecodeRecord(const TraceLayout& layout, const uint32_t* at, const uint32_t* end,
                          uint64_t r, uint32_t units_per_block, DecodedRecord& rec,
                          uint64_t& events) {
  rec.record_index = r;
  rec.block_linear = static_cast<uint32_t>(SampledBlockId(layout, r / units_per_block));
  rec.unit_index = static_cast<uint32_t>(r % units_per_block);
  // One read of the words (a relaxed atomic load each: the compiler may not read them again).
  for (uint32_t i = 0; i < abi::kHeaderWords; ++i) {
    rec.header[i] = std::atomic_ref<const uint32_t>(at[i]).load(std::memory_order_relaxed);
  }
  const uint32_t* const h = rec.header.data();

  HeaderProblem problem = HeaderProblem::kNone;
  if (h[kMagic] != abi::kTraceMagic) {
    problem = AllZero(h, abi::kHeaderWords) ? HeaderProblem::kMissing : HeaderProblem::kBadMagic;
  } else if (h[kVersion] < abi::kMinTraceVersion || h[kVersion] > abi::kTraceVersion) {
    problem = HeaderProblem::kBadVersion;
  } else if (h[kHeaderWordsField] != abi::kHeaderWords) {
    problem = HeaderProblem::kBadHeaderWords;
  } else if (const uint32_t expected = ExpectedChecksum(h, at + abi::kHeaderWords, end);
             h[kChecksum] != expected) {
    problem = HeaderProblem::kBadChecksum;
    rec.expected_checksum = expected;
  } else if (h[kCapacity] != layout.capacity) {
    return absl::DataLossError(absl::StrFormat(
        "record %d (%s) was written with capacity %d but the layout says %d: "
        "the buffer was recorded with another layout (its sidecar is stale or belongs to "
        "another run); re-save the trace with the layout the kernel ran with",
        r, UnitName(layout, rec.block_linear, rec.unit_index), h[kCapacity], layout.capacity));
  } else if (h[kBlockLinear] != rec.block_linear) {
    problem = HeaderProblem::kWrongBlock;
  } else if (h[kUnitIndex] != rec.unit_index) {
    problem = HeaderProblem::kWrongUnit;
  } else if ((uint64_t{h[kStartGtLo]} | (uint64_t{h[kStartGtHi]} << 32)) >= kMaxGlobaltimerNs) {
    problem = HeaderProblem::kBadGlobaltimer;
  }
  rec.header_problem = problem;
  if (decode_record_hook != nullptr) decode_record_hook(at);
  if (problem != HeaderProblem::kNone) {
    rec.events = {};
    rec.events_recovered = false;
    return absl::OkStatus();
  }
  rec.version = h[kVersion];
  rec.sm_id = h[kSmId];
  rec.attempted = h[kAttempted];
  rec.capacity = layout.capacity;  // = h[kCapacity], checked above
  rec.flags = h[kFlags];
  rec.start_clock = h[kStartClock];
  rec.end_clock = h[kEndClock];
  rec.start_globaltimer = uint64_t{h[kStartGtLo]} | (uint64_t{h[kStartGtHi]} << 32);
  rec.end_globaltimer = uint64_t{h[kEndGtLo]} | (uint64_t{h[kEndGtHi]} << 32);
  // Events are pairs of uint32 words; abi::Event is that pair (static_asserts in the ABI).
  const abi::Event* slots = reinterpret_cast<const abi::Event*>(at + abi::kHeaderWords);
  uint32_t n;
  if (rec.complete()) {
    n = rec.attempted < rec.capacity ? rec.attempted : rec.capacity;
    rec.events_recovered = false;
  } else {
    n = 0;
    while (n < rec.capacity && (slots[n].tag | slots[n].clock) != 0) {
      // A payload slot may be all zero (barrier 0, phase 0): it goes with its event.
      const bool payload = rec.version >= 2 && abi::TagHasPayload(slots[n].tag);
      n += payload && n + 1 < rec.capacity ? 2 : 1;
    }
    rec.events_recovered = true;
  }
  rec.events = absl::Span<const abi::Event>(slots, n);
  events += n;
  return absl::OkStatus();
}

}  // namespace

namespace {

constexpr EnumTable<HeaderProblem, 9> kHeaderProblems{"header problem", {{
    {HeaderProblem::kNone, "none"},
    {HeaderProblem::kMissing, "missing"},
    {HeaderProblem::kBadMagic, "bad_magic"},
    {HeaderProblem::kBadVersion, "bad_version"},
    {HeaderProblem::kBadHeaderWords, "bad_header_words"},
    {HeaderProblem::kBadChecksum, "bad_checksum"},
    {HeaderProblem::kWrongBlock, "wrong_block"},
    {HeaderProblem::kWrongUnit, "wrong_unit"},
    {HeaderProblem::kBadGlobaltimer, "bad_globaltimer"},
}}};
static_assert(kHeaderProblems.Covers(9));

}  // namespace

const char* HeaderProblemName(HeaderProblem problem) { return kHeaderProblems.Name(problem); }

namespace internal {
void SetDecodeRecordHookForTesting(DecodeRecordHook hook) { decode_record_hook = hook; }
}  // namespace internal

uint64_t DecodeCount() { return decode_count.load(std::memory_order_relaxed); }

absl::Status DecodeInto(const TraceLayout& layout, absl::Span<const uint32_t> words,
                        DecodedTrace& out, int threads) {
  decode_count.fetch_add(1, std::memory_order_relaxed);
  RETURN_IF_ERROR(ValidateLayout(layout));
  const uint64_t num_records = NumRecords(layout);
  const uint64_t record_words = abi::RecordWords(layout.capacity);
  const uint64_t expected_words = num_records * record_words;
  if (words.size() != expected_words) {
    const uint64_t have = words.size();
    return absl::DataLossError(absl::StrFormat(
        "trace buffer has %d words but the layout needs %d (%d records x %d words for "
        "capacity %d); %d words would be %.2f records of this layout: the buffer does not "
        "belong to this layout or was cut short",
        have, expected_words, num_records, record_words, layout.capacity, have,
        static_cast<double>(have) / static_cast<double>(record_words)));
  }
  const uint32_t units_per_block = UnitsPerBlock(layout);
  out.layout = &layout;
  out.records.clear();
  out.records.resize(num_records);
  out.total_events = 0;

  const uint32_t* base = words.data();
  const size_t pieces = RangePieces(threads, words.size(), num_records);
  std::vector<uint64_t> events(pieces, 0);
  RETURN_IF_ERROR(ParallelRanges(
      num_records, pieces, [&](uint64_t first, uint64_t last, size_t piece) -> absl::Status {
        for (uint64_t r = first; r < last; ++r) {
          RETURN_IF_ERROR(DecodeRecord(layout, base + r * record_words, base + expected_words, r,
                                       units_per_block, out.records[r], events[piece]));
        }
        return absl::OkStatus();
      }));
  for (uint64_t n : events) out.total_events += n;
  return absl::OkStatus();
}

absl::StatusOr<DecodedTrace> Decode(const TraceLayout& layout, absl::Span<const uint32_t> words) {
  DecodedTrace out;
  RETURN_IF_ERROR(DecodeInto(layout, words, out));
  return out;
}

}  // namespace warptrace
