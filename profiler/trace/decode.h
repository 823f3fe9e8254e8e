// Decode: a raw trace buffer + its TraceLayout -> one DecodedRecord per trace unit, with a
// zero-copy view of each unit's events. The first stage of the dump (decode -> verify ->
// timeline); it reads the words and checks the record format, nothing more.
//
//   ASSIGN_OR_RETURN(DecodedTrace decoded, Decode(layout, words));
//   for (const DecodedRecord& r : decoded.records) {
//     if (r.header_problem != HeaderProblem::kNone) continue;   // verify reports these
//     for (const abi::Event& e : r.events) ... abi::TagSite(e.tag) ... e.clock ...
//   }
//
// What is fatal and what is not. Decode fails (no DecodedTrace) only when the buffer as a
// whole does not fit the layout, because then every record would be garbage:
//   * InvalidArgument: the layout fails ValidateLayout.
//   * DataLoss: the buffer's size is not NumRecords(layout) records of
//     RecordWords(capacity) words (expected vs actual, and what the actual size implies);
//     or a record whose header is self-consistent (magic, version, header_words and checksum
//     all check out) says another capacity than the layout: the device wrote this buffer
//     with a different layout, so record boundaries are misplaced.
// Every other problem is confined to one record and becomes its `header_problem`, which
// verify (verify.h) turns into a finding with the record's coordinates: a unit that never
// ran (all-zero header), a wrong magic, version or header size, a checksum mismatch, a
// block id or unit index that disagrees with the record's position in the buffer, and a
// start globaltimer no device can have reached (at or past kMaxGlobaltimerNs).
//
// Lifetimes: a DecodedTrace points into the caller's `words` (the events) and `layout` (no
// copies); both must outlive it. A buffer that another thread changes meanwhile (a Python
// buffer is read in place) is not an error the dump can rule out: each record's header is
// read once (DecodedRecord::header) and the events a record may use are bounded by the
// layout's capacity, so the changed words give verdicts (a bad checksum, a clock going back,
// an unknown site) and never a read outside the buffer; which verdicts depends on when the
// words changed. Keep the buffer unchanged for a meaningful trace.
//
// Cost: one pass over the headers, O(records), and one over the stored events of each
// complete version-3 record (the checksum covers them, trace_abi.h) or of each unit that
// never finished (see DecodedRecord::events_recovered). No allocation besides `records`,
// which DecodeInto reuses across calls.
#ifndef WARPTRACE_PROFILER_TRACE_DECODE_H_
#define WARPTRACE_PROFILER_TRACE_DECODE_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "format/trace_abi.h"

namespace warptrace {

// The largest believable %globaltimer stamp, exclusive: 2^62 ns, about 146 years (as Unix
// time, the year 2116). A start stamp at or past it is a damaged header: it could not be
// placed on the timeline, and would overflow the signed nanosecond arithmetic downstream.
inline constexpr uint64_t kMaxGlobaltimerNs = uint64_t{1} << 62;

// The first problem found in a record's header, in the order they are checked.
enum class HeaderProblem : uint8_t {
  kNone,
  kMissing,         // every header word is 0: the unit never ran its prologue
  kBadMagic,        // magic != abi::kTraceMagic (and the header is not all zero)
  kBadVersion,      // version outside [abi::kMinTraceVersion, abi::kTraceVersion]
  kBadHeaderWords,  // header_words != abi::kHeaderWords
  // The checksum disagrees with the identity words (for a complete version-3 record: with
  // the identity words folded with its stored event slots, trace_abi.h; an event or an
  // identity word changed after the kernel wrote it). The record's events are not used.
  kBadChecksum,
  kWrongBlock,      // block_linear is not the block this buffer position belongs to
  kWrongUnit,       // unit_index is not the unit this buffer position belongs to
  kBadGlobaltimer,  // start globaltimer >= kMaxGlobaltimerNs
};
const char* HeaderProblemName(HeaderProblem problem);  // "missing", "bad_magic", ...

struct DecodedRecord {
  uint64_t record_index = 0;   // position in the buffer
  // Coordinates from the record's position and the layout (trustworthy even when the header
  // is not); a header that disagrees is kWrongBlock / kWrongUnit.
  uint32_t block_linear = 0;
  uint32_t unit_index = 0;
  HeaderProblem header_problem = HeaderProblem::kNone;
  // kBadChecksum: the checksum the words imply (for messages).
  uint32_t expected_checksum = 0;
  // Header fields as written; meaningful only when header_problem == kNone.
  uint32_t version = 0;    // abi::kMinTraceVersion .. abi::kTraceVersion
  uint32_t sm_id = 0;
  uint32_t attempted = 0;  // events the unit tried to record (may exceed capacity)
  uint32_t capacity = 0;
  uint32_t flags = 0;      // abi::kFlag* bits
  uint32_t start_clock = 0;
  uint32_t end_clock = 0;
  uint64_t start_globaltimer = 0;  // ns
  uint64_t end_globaltimer = 0;
  // The header words as read, once, from the buffer (abi::kHeaderWords of them): every field
  // above and header_problem come from this copy, so a buffer changed during the dump is
  // judged on one consistent header. Also for messages about a bad header.
  std::array<uint32_t, abi::kHeaderWords> header{};
  // The unit's events, in recording order, pointing into the caller's buffer. Empty when
  // header_problem != kNone. For a finished unit (kFlagComplete): the first
  // min(attempted, capacity). For a unit that started but never finished, whose epilogue
  // never wrote `attempted`: the leading slots that are not all zero (the host zero-fills
  // the buffer before launch; a payload slot, which may be zero, is kept with its event),
  // with events_recovered = true. Version 2: payload slots are among these slots.
  absl::Span<const abi::Event> events;
  bool events_recovered = false;

  bool complete() const { return (flags & abi::kFlagComplete) != 0; }
  // The site id of an event's tag, read by this record's version's tag layout.
  uint32_t SiteOf(uint32_t tag) const {
    return version >= 2 ? abi::TagSite(tag) : abi::TagSiteV1(tag);
  }
  // Whether the event with this tag is followed by its payload slot (version 2 only). The
  // slots of `events` include payload slots; walk them with NextEvent.
  bool HasPayload(uint32_t tag) const { return version >= 2 && abi::TagHasPayload(tag); }
  // The payload of the event in slot `i`, or null when it has none or its payload slot was
  // past capacity (that event was dropped at the capacity edge; see recorder.cuh).
  const abi::Payload* PayloadOf(uint32_t i) const {
    if (!HasPayload(events[i].tag) || i + 1 >= events.size()) return nullptr;
    return reinterpret_cast<const abi::Payload*>(&events[i + 1]);
  }
  // The slot of the event after the one in slot `i`.
  uint32_t NextEvent(uint32_t i) const { return HasPayload(events[i].tag) ? i + 2 : i + 1; }
  // attempted - capacity when the unit overflowed, else 0.
  uint32_t dropped() const { return attempted > capacity ? attempted - capacity : 0; }
};

struct DecodedTrace {
  const TraceLayout* layout = nullptr;  // not owned
  std::vector<DecodedRecord> records;   // one per buffer position, in buffer order
  uint64_t total_events = 0;            // sum of events.size()
};

// Decodes `words` (the whole buffer, host order) with `layout`. Error codes above.
absl::StatusOr<DecodedTrace> Decode(const TraceLayout& layout, absl::Span<const uint32_t> words);

// As Decode, reusing `out`'s storage (for benchmarks and repeated dumps), on `threads`
// threads (records split into contiguous ranges; the result and the error are the same for
// any count, buffers under ~1 MiB per thread use fewer). On error `out` is left in an
// unspecified but valid state.
absl::Status DecodeInto(const TraceLayout& layout, absl::Span<const uint32_t> words,
                        DecodedTrace& out, int threads = 1);

// How many buffers this process has decoded (Decode and DecodeInto calls, failed ones
// included), for tests that hold a front end to one decode per buffer. Thread-safe.
uint64_t DecodeCount();

namespace internal {

// Test seam (issue 55): called on the decoding thread with each record's first word in the
// caller's buffer, after the record's header was judged and before its fields are taken from
// it, so that a test can change the buffer at exactly that point (as another thread may).
// Null (the default): nothing is called. Not thread-safe: set it before decoding.
using DecodeRecordHook = void (*)(const uint32_t* record);
void SetDecodeRecordHookForTesting(DecodeRecordHook hook);

}  // namespace internal

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_DECODE_H_
