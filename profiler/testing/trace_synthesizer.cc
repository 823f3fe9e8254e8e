#include "profiler/testing/trace_synthesizer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"

namespace warptrace::testing {
namespace {

constexpr uint64_t kClockSpan = uint64_t{1} << 32;

abi::RecordHeader* HeaderAt(absl::Span<uint32_t> words, uint64_t record, uint32_t capacity) {
  return reinterpret_cast<abi::RecordHeader*>(words.data() + record * abi::RecordWords(capacity));
}

abi::Event* EventsAt(absl::Span<uint32_t> words, uint64_t record, uint32_t capacity) {
  return reinterpret_cast<abi::Event*>(words.data() + record * abi::RecordWords(capacity) +
                                       abi::kHeaderWords);
}

// The checksum the recorder writes (trace_abi.h): the identity words', folded from version 3
// on with a complete record's stored slots, which follow `h` in the buffer.
void Reseal(abi::RecordHeader& h) {
  h.checksum = abi::HeaderChecksum(h.magic, h.version, h.sm_id, h.block_linear, h.unit_index,
                                   h.capacity);
  if (h.version >= abi::kEventChecksumVersion && (h.flags & abi::kFlagComplete) != 0) {
    const uint32_t* slots = reinterpret_cast<const uint32_t*>(&h) + abi::kHeaderWords;
    h.checksum = abi::FoldEventSlots(h.checksum, slots, std::min(h.attempted, h.capacity));
  }
}

// Whether `e` (an event slot of a record with header `h`) is followed by its payload slot.
bool HasPayload(const abi::RecordHeader& h, const abi::Event& e) {
  return h.version >= 2 && abi::TagHasPayload(e.tag);
}

uint64_t Quantize(uint64_t ns, uint64_t tick) { return tick <= 1 ? ns : ns / tick * tick; }

}  // namespace

UnitScript& UnitScript::Begin(uint32_t site) { return Tag(abi::MakeTag(site, false)); }
UnitScript& UnitScript::End(uint32_t site) { return Tag(abi::MakeTag(site, true)); }

UnitScript& UnitScript::Tag(uint32_t tag) {
  steps_.push_back({tag, pending_});
  pending_ = 0;
  slots_ += abi::TagHasPayload(tag) ? 2 : 1;
  return *this;
}

UnitScript& UnitScript::PayloadTag(uint32_t tag, uint32_t a, uint32_t b) {
  steps_.push_back({tag | abi::kPayloadFlag, pending_, a, b});
  pending_ = 0;
  slots_ += 2;
  return *this;
}

UnitScript& UnitScript::Arrive(uint32_t site, uint32_t barrier, uint32_t phase) {
  return PayloadTag(abi::MakeTag(site, false), barrier, phase);
}
UnitScript& UnitScript::WaitBegin(uint32_t site, uint32_t barrier, uint32_t phase) {
  return PayloadTag(abi::MakeTag(site, false), barrier, phase);
}
UnitScript& UnitScript::WaitEnd(uint32_t site, uint32_t barrier, uint32_t phase) {
  return PayloadTag(abi::MakeTag(site, true), barrier, phase);
}
UnitScript& UnitScript::WaitPhase(uint32_t site, uint32_t barrier, uint32_t phase,
                                  uint64_t cycles) {
  return WaitBegin(site, barrier, phase).Work(cycles).WaitEnd(site, barrier, phase);
}
UnitScript& UnitScript::AsyncBegin(uint32_t site, uint32_t issue, uint32_t barrier) {
  return PayloadTag(abi::MakeTag(site, false), issue, barrier);
}
UnitScript& UnitScript::AsyncEnd(uint32_t site, uint32_t issue, uint32_t barrier) {
  return PayloadTag(abi::MakeTag(site, true), issue, barrier);
}
UnitScript& UnitScript::CopyBegin(uint32_t site, uint32_t barrier, uint32_t phase) {
  return PayloadTag(abi::MakeTag(site, false), barrier, phase);
}

UnitScript& UnitScript::Work(uint64_t cycles) {
  pending_ += cycles;
  return *this;
}

UnitScript& UnitScript::Region(uint32_t site, uint64_t cycles) {
  return Begin(site).Work(cycles).End(site);
}

UnitScript& UnitScript::Repeat(uint32_t times, const UnitScript& body) {
  steps_.reserve(steps_.size() + uint64_t{times} * body.steps_.size());
  slots_ += uint64_t{times} * body.slots_;
  for (uint32_t t = 0; t < times; ++t) {
    for (size_t i = 0; i < body.steps_.size(); ++i) {
      Step step = body.steps_[i];
      if (i == 0) step.gap_cycles += pending_;
      steps_.push_back(step);
    }
    if (body.steps_.empty()) {
      pending_ += body.pending_;
    } else {
      pending_ = body.pending_;
    }
  }
  return *this;
}

TraceSynthesizer::TraceSynthesizer(TraceLayout layout, SynthOptions options)
    : layout_(std::move(layout)), options_(options) {}

void TraceSynthesizer::SetUnitScript(uint64_t record_index, UnitScript script) {
  per_record_[record_index] = std::move(script);
}

const UnitScript& TraceSynthesizer::ScriptFor(uint64_t record_index) const {
  auto it = per_record_.find(record_index);
  return it == per_record_.end() ? default_ : it->second;
}

uint64_t TraceSynthesizer::StartNs(uint64_t record_index) const {
  return options_.start_globaltimer_ns + record_index * options_.unit_stagger_ns;
}

double TraceSynthesizer::ElapsedNs(uint64_t record_index) const {
  const UnitScript& script = ScriptFor(record_index);
  uint64_t cycles = options_.prologue_cycles + script.trailing_cycles() + options_.epilogue_cycles;
  for (const UnitScript::Step& step : script.steps()) {
    cycles += step.gap_cycles + options_.event_cost_cycles;
  }
  return static_cast<double>(cycles) / options_.cycles_per_ns;
}

absl::Status TraceSynthesizer::WriteRecord(uint64_t record_index,
                                           absl::Span<uint32_t> words) const {
  const uint64_t records = NumRecords(layout_);
  const uint32_t capacity = layout_.capacity;
  if (record_index >= records || words.size() != records * abi::RecordWords(capacity)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "record %d of a %d-word buffer does not fit the layout's %d records of %d words",
        record_index, words.size(), records, abi::RecordWords(capacity)));
  }
  const uint32_t units_per_block = UnitsPerBlock(layout_);
  const uint32_t block =
      static_cast<uint32_t>(SampledBlockId(layout_, record_index / units_per_block));
  const uint32_t unit = static_cast<uint32_t>(record_index % units_per_block);
  const UnitScript& script = ScriptFor(record_index);

  abi::RecordHeader& h = *HeaderAt(words, record_index, capacity);
  abi::Event* events = EventsAt(words, record_index, capacity);
  const uint32_t c0 = options_.start_clock +
                      static_cast<uint32_t>(record_index * options_.clock_offset_per_record);
  uint64_t elapsed = options_.prologue_cycles;
  uint64_t slot = 0;  // like the recorder's `next`: may run past capacity
  for (size_t i = 0; i < script.steps().size(); ++i) {
    const UnitScript::Step& step = script.steps()[i];
    const uint64_t gap = step.gap_cycles + options_.event_cost_cycles;
    if (gap >= kClockSpan) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "record %d event %d comes %d cycles after the previous stamp; stamps must be less "
          "than 2^32 cycles apart",
          record_index, i, gap));
    }
    elapsed += gap;
    if (slot < capacity) events[slot] = {step.tag, static_cast<uint32_t>(c0 + elapsed)};
    ++slot;
    if (abi::TagHasPayload(step.tag)) {
      if (slot < capacity) events[slot] = {step.a, step.b};
      ++slot;
    }
  }
  const uint32_t written = static_cast<uint32_t>(std::min<uint64_t>(slot, capacity));
  for (uint32_t i = written; i < capacity; ++i) events[i] = {0, 0};
  const uint64_t tail = script.trailing_cycles() + options_.epilogue_cycles;
  if (tail >= kClockSpan) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "record %d ends %d cycles after its last event; stamps must be less than 2^32 cycles "
        "apart",
        record_index, tail));
  }
  elapsed += tail;

  const uint64_t start_ns = StartNs(record_index);
  const uint64_t end_ns =
      start_ns + static_cast<uint64_t>(std::llround(static_cast<double>(elapsed) /
                                                    options_.cycles_per_ns));
  const uint64_t start_gt = Quantize(start_ns, options_.globaltimer_tick_ns);
  const uint64_t end_gt = Quantize(end_ns, options_.globaltimer_tick_ns);

  h.magic = abi::kTraceMagic;
  h.version = options_.version;
  h.sm_id = options_.num_virtual_sms == 0 ? 0 : block % options_.num_virtual_sms;
  h.block_linear = block;
  h.unit_index = unit;
  h.attempted = static_cast<uint32_t>(script.slots());
  h.capacity = capacity;
  h.flags = abi::kFlagComplete | (layout_.placement == Placement::kShared ? abi::kFlagShared : 0);
  h.start_clock = c0;
  h.end_clock = static_cast<uint32_t>(c0 + elapsed);
  h.start_globaltimer_lo = static_cast<uint32_t>(start_gt);
  h.start_globaltimer_hi = static_cast<uint32_t>(start_gt >> 32);
  h.end_globaltimer_lo = static_cast<uint32_t>(end_gt);
  h.end_globaltimer_hi = static_cast<uint32_t>(end_gt >> 32);
  h.header_words = abi::kHeaderWords;
  Reseal(h);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> TraceSynthesizer::Build() const {
  RETURN_IF_ERROR(ValidateLayout(layout_));
  const uint64_t records = NumRecords(layout_);
  std::vector<uint32_t> words(records * abi::RecordWords(layout_.capacity), 0);
  for (uint64_t r = 0; r < records; ++r) RETURN_IF_ERROR(WriteRecord(r, absl::MakeSpan(words)));
  return words;
}

const char* CorruptionName(Corruption corruption) {
  switch (corruption) {
    case Corruption::kBadMagic: return "bad_magic";
    case Corruption::kBadVersion: return "bad_version";
    case Corruption::kBadHeaderWords: return "bad_header_words";
    case Corruption::kBadChecksum: return "bad_checksum";
    case Corruption::kWrongBlock: return "wrong_block";
    case Corruption::kWrongUnit: return "wrong_unit";
    case Corruption::kWrongCapacity: return "wrong_capacity";
    case Corruption::kMissingUnit: return "missing_unit";
    case Corruption::kIncompleteUnit: return "incomplete_unit";
    case Corruption::kSmIdOutOfRange: return "sm_id_out_of_range";
    case Corruption::kEndBeforeStart: return "end_before_start";
    case Corruption::kBadGlobaltimer: return "bad_globaltimer";
    case Corruption::kDroppedEvents: return "dropped_events";
    case Corruption::kUnpairedEvent: return "unpaired_event";
    case Corruption::kExitWithoutBegin: return "exit_without_begin";
    case Corruption::kMismatchedNesting: return "mismatched_nesting";
    case Corruption::kUnknownSite: return "unknown_site";
    case Corruption::kClockBackwards: return "clock_backwards";
    case Corruption::kReleaseBeforeArrivals: return "release_before_arrivals";
    case Corruption::kArrivalCountMismatch: return "arrival_count_mismatch";
    case Corruption::kAsyncEndWithoutBegin: return "async_end_without_begin";
    case Corruption::kAsyncNeverCompleted: return "async_never_completed";
  }
  return "?";
}

namespace {

// One complete record being corrupted, and what the corruptions of its events share.
struct RecordEdit {
  const TraceLayout& layout;
  const CorruptionSpec& spec;
  abi::RecordHeader& h;
  abi::Event* events;
  uint32_t n;          // event slots written
  uint32_t num_sites;
  std::vector<uint32_t> starts;  // slot indices of events (payload slots skipped), in order

  absl::Status Refuse(absl::string_view why) const {
    return absl::InvalidArgumentError(absl::StrFormat("cannot inject %s into record %d: %s",
                                                      CorruptionName(spec.kind), spec.record,
                                                      why));
  }
  // The event to corrupt: spec.event, or the first event matching `want`.
  absl::StatusOr<uint32_t> Pick(const std::function<bool(const abi::Event&)>& want,
                                absl::string_view what) const {
    if (spec.event >= 0) {
      if (static_cast<uint64_t>(spec.event) >= n) {
        return Refuse(absl::StrFormat("event %d is past its %d events", spec.event, n));
      }
      if (!std::binary_search(starts.begin(), starts.end(), spec.event)) {
        return Refuse(absl::StrFormat("slot %d is a payload slot, not an event", spec.event));
      }
      if (!want(events[spec.event])) {
        return Refuse(absl::StrCat("slot ", spec.event, " is no ", what));
      }
      return static_cast<uint32_t>(spec.event);
    }
    for (uint32_t i : starts) {
      if (want(events[i])) return i;
    }
    return Refuse(absl::StrCat("it has no ", what));
  }
  // An event with payload of a `kind` site; exit: 1 exits only, 0 entries only, -1 both.
  std::function<bool(const abi::Event&)> KindIs(SiteKind kind, int exit) const {
    return [this, kind, exit](const abi::Event& e) {
      const uint32_t site = abi::TagSite(e.tag);
      return abi::TagHasPayload(e.tag) && site < layout.sites.size() &&
             layout.sites[site].kind == kind &&
             (exit < 0 || abi::TagIsExit(e.tag) == (exit == 1));
    };
  }
  bool Nests(uint32_t site) const {
    return site >= num_sites || SiteKindNests(layout.sites[site].kind);
  }
  // Removes event i and its payload slot: later slots move up, attempted shrinks.
  absl::Status Remove(uint32_t i) {
    if (h.attempted > h.capacity) return Refuse("it dropped events (nothing may move)");
    const uint32_t width = HasPayload(h, events[i]) ? 2 : 1;
    if (i + width > n) return Refuse("its payload fell past capacity");
    std::copy(events + i + width, events + n, events + i);
    std::fill(events + n - width, events + n, abi::Event{0, 0});
    h.attempted -= width;
    return absl::OkStatus();
  }
};

// The header's corruptions (and a missing unit); NotFound for an event corruption.
absl::Status CorruptHeader(RecordEdit& r, absl::Span<uint32_t> words) {
  abi::RecordHeader& h = r.h;
  switch (r.spec.kind) {
    case Corruption::kBadMagic:
      h.magic = 0xdeadbeefu;
      return absl::OkStatus();
    case Corruption::kBadVersion:
      h.version = abi::kTraceVersion + 1;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kBadHeaderWords:
      h.header_words = abi::kHeaderWords + 1;
      return absl::OkStatus();
    case Corruption::kBadChecksum:
      h.sm_id ^= 0x40u;
      return absl::OkStatus();
    case Corruption::kWrongBlock:
      h.block_linear += 1;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kWrongUnit:
      h.unit_index += 1;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kWrongCapacity:
      h.capacity -= 1;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kMissingUnit: {
      const uint64_t record_words = abi::RecordWords(r.layout.capacity);
      std::fill_n(words.data() + r.spec.record * record_words, record_words, 0u);
      return absl::OkStatus();
    }
    case Corruption::kIncompleteUnit:
      h.flags &= ~abi::kFlagComplete;
      h.attempted = 0;
      h.end_clock = 0;
      h.end_globaltimer_lo = h.end_globaltimer_hi = 0;
      Reseal(h);  // an unfinished unit's checksum covers its header only
      return absl::OkStatus();
    case Corruption::kSmIdOutOfRange:
      if (r.layout.clock.num_sms == 0) {
        return r.Refuse("the layout's clock.num_sms is 0 (unknown)");
      }
      h.sm_id = r.layout.clock.num_sms;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kEndBeforeStart: {
      const uint64_t start =
          uint64_t{h.start_globaltimer_lo} | uint64_t{h.start_globaltimer_hi} << 32;
      if (start < 1000) return r.Refuse("its start globaltimer is below 1000 ns");
      const uint64_t end = start - 1000;
      h.end_globaltimer_lo = static_cast<uint32_t>(end);
      h.end_globaltimer_hi = static_cast<uint32_t>(end >> 32);
      return absl::OkStatus();
    }
    case Corruption::kBadGlobaltimer:
      h.start_globaltimer_hi |= 0x80000000u;
      h.end_globaltimer_hi |= 0x80000000u;
      return absl::OkStatus();
    case Corruption::kDroppedEvents:
      if (h.attempted < h.capacity) {
        return r.Refuse(absl::StrFormat(
            "it recorded %d of %d slots; dropping needs every slot written (script at least "
            "capacity events)",
            h.attempted, h.capacity));
      }
      h.attempted += r.spec.amount == 0 ? 1 : r.spec.amount;
      return absl::OkStatus();
    default:
      return absl::NotFoundError("not a header corruption");
  }
}

// Another nesting site than the exit at slot i's, so the exit closes the wrong region.
absl::Status MismatchNesting(RecordEdit& r) {
  if (r.num_sites < 2) return r.Refuse("the layout has fewer than 2 sites");
  ASSIGN_OR_RETURN(uint32_t i, r.Pick([&](const abi::Event& e) {
    return abi::TagIsExit(e.tag) && r.Nests(abi::TagSite(e.tag));
  }, "exit event"));
  const uint32_t own = abi::TagSite(r.events[i].tag);
  uint32_t other = own;
  for (uint32_t k = 1; k < r.num_sites; ++k) {
    other = (own + k) % r.num_sites;
    if (SiteKindNests(r.layout.sites[other].kind)) break;
  }
  if (other == own) return r.Refuse("the layout has one nesting site");
  r.events[i].tag = abi::MakeTag(other, true) | (r.events[i].tag & abi::kPayloadFlag);
  return absl::OkStatus();
}

absl::Status StepClockBack(RecordEdit& r) {
  if (r.starts.empty()) return r.Refuse("it has no event");
  const uint32_t i = r.spec.event >= 0 ? static_cast<uint32_t>(r.spec.event) : r.starts.back();
  if (i >= r.n) return r.Refuse(absl::StrFormat("event %d is past its %d events", i, r.n));
  auto at = std::lower_bound(r.starts.begin(), r.starts.end(), i);
  if (at == r.starts.end() || *at != i) return r.Refuse("the chosen slot is a payload slot");
  const uint32_t prev = at == r.starts.begin() ? r.h.start_clock : r.events[*(at - 1)].clock;
  r.events[i].clock = prev - (r.spec.amount == 0 ? 100000u : r.spec.amount);
  return absl::OkStatus();
}

// A phase wait's payload phase moved one on, at its entry and at its release (the next exit
// of the same wait), so it is released before its (new) phase's arrivals.
absl::Status ReleaseBeforeArrivals(RecordEdit& r) {
  ASSIGN_OR_RETURN(uint32_t i, r.Pick(r.KindIs(SiteKind::kPhaseWait, 0), "phase wait entry"));
  if (i + 1 >= r.n) return r.Refuse("its payload fell past capacity");
  abi::Event* events = r.events;
  const uint32_t site = abi::TagSite(events[i].tag);
  const uint32_t barrier = events[i + 1].tag, phase = events[i + 1].clock;
  ++events[i + 1].clock;
  for (auto it = std::upper_bound(r.starts.begin(), r.starts.end(), i); it != r.starts.end();
       ++it) {
    const abi::Event& e = events[*it];
    if (*it + 1 < r.n && abi::TagIsExit(e.tag) && abi::TagHasPayload(e.tag) &&
        abi::TagSite(e.tag) == site && events[*it + 1].tag == barrier &&
        events[*it + 1].clock == phase) {
      ++events[*it + 1].clock;
      break;
    }
  }
  return absl::OkStatus();
}

// The corruptions of events and their payloads.
absl::Status CorruptEvents(RecordEdit& r) {
  switch (r.spec.kind) {
    case Corruption::kUnpairedEvent:
      if (r.starts.empty() || r.h.attempted > r.h.capacity) {
        return r.Refuse("it has no event to remove");
      }
      return r.Remove(r.starts.back());
    case Corruption::kExitWithoutBegin: {
      ASSIGN_OR_RETURN(uint32_t i, r.Pick([&](const abi::Event& e) {
        return !abi::TagIsExit(e.tag) && r.Nests(abi::TagSite(e.tag));
      }, "entry event"));
      r.events[i].tag |= abi::kExitFlag;
      return absl::OkStatus();
    }
    case Corruption::kMismatchedNesting:
      return MismatchNesting(r);
    case Corruption::kUnknownSite: {
      ASSIGN_OR_RETURN(uint32_t i, r.Pick([](const abi::Event&) { return true; }, "event"));
      r.events[i].tag = abi::MakeTag(r.num_sites, abi::TagIsExit(r.events[i].tag)) |
                        (r.events[i].tag & abi::kPayloadFlag);
      return absl::OkStatus();
    }
    case Corruption::kClockBackwards:
      return StepClockBack(r);
    case Corruption::kReleaseBeforeArrivals:
      return ReleaseBeforeArrivals(r);
    case Corruption::kArrivalCountMismatch: {
      ASSIGN_OR_RETURN(uint32_t i,
                       r.Pick(r.KindIs(SiteKind::kBarrierArrive, -1), "barrier arrival"));
      if (i + 1 >= r.n) return r.Refuse("its payload fell past capacity");
      ++r.events[i + 1].clock;  // payload b: the phase
      return absl::OkStatus();
    }
    case Corruption::kAsyncEndWithoutBegin: {
      ASSIGN_OR_RETURN(uint32_t i, r.Pick(r.KindIs(SiteKind::kAsyncCopy, 0), "async copy begin"));
      return r.Remove(i);
    }
    case Corruption::kAsyncNeverCompleted: {
      ASSIGN_OR_RETURN(uint32_t i, r.Pick(r.KindIs(SiteKind::kAsyncCopy, 1), "async copy end"));
      return r.Remove(i);
    }
    default:
      return r.Refuse("unknown corruption");
  }
}

}  // namespace

absl::Status InjectCorruption(const TraceLayout& layout, const CorruptionSpec& spec,
                              absl::Span<uint32_t> words) {
  const uint64_t records = NumRecords(layout);
  const uint32_t capacity = layout.capacity;
  if (spec.record >= records || words.size() != records * abi::RecordWords(capacity)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot inject %s into record %d: the buffer has %d records of this layout",
        CorruptionName(spec.kind), spec.record, records));
  }
  abi::RecordHeader& h = *HeaderAt(words, spec.record, capacity);
  abi::Event* events = EventsAt(words, spec.record, capacity);
  RecordEdit r{layout, spec, h, events, std::min(h.attempted, h.capacity),
               static_cast<uint32_t>(layout.sites.size()), {}};
  if (h.magic != abi::kTraceMagic || (h.flags & abi::kFlagComplete) == 0) {
    return r.Refuse("it is not a complete record");
  }
  for (uint32_t i = 0; i < r.n; i += HasPayload(h, events[i]) ? 2 : 1) r.starts.push_back(i);
  absl::Status header = CorruptHeader(r, words);
  if (!absl::IsNotFound(header)) return header;
  // The device wrote the wrong events: its epilogue folded them into the checksum as written.
  RETURN_IF_ERROR(CorruptEvents(r));
  Reseal(h);
  return absl::OkStatus();
}

}  // namespace warptrace::testing
