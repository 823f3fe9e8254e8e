#include "profiler/testing/trace_synthesizer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "profiler/device/trace_abi.h"

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

void Reseal(abi::RecordHeader& h) {
  h.checksum = abi::HeaderChecksum(h.magic, h.version, h.sm_id, h.block_linear, h.unit_index,
                                   h.capacity);
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
  h.version = abi::kTraceVersion;
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

absl::Status InjectCorruption(const TraceLayout& layout, const CorruptionSpec& spec,
                              absl::Span<uint32_t> words) {
  const uint64_t records = NumRecords(layout);
  const uint32_t capacity = layout.capacity;
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot inject %s into record %d: %s",
                                                      CorruptionName(spec.kind), spec.record,
                                                      why));
  };
  if (spec.record >= records || words.size() != records * abi::RecordWords(capacity)) {
    return refuse(absl::StrFormat("the buffer has %d records of this layout", records));
  }
  abi::RecordHeader& h = *HeaderAt(words, spec.record, capacity);
  abi::Event* events = EventsAt(words, spec.record, capacity);
  if (h.magic != abi::kTraceMagic || (h.flags & abi::kFlagComplete) == 0) {
    return refuse("it is not a complete record");
  }
  const uint32_t n = std::min(h.attempted, h.capacity);
  const uint32_t num_sites = static_cast<uint32_t>(layout.sites.size());
  // Slot indices of events (payload slots skipped), in order.
  std::vector<uint32_t> starts;
  for (uint32_t i = 0; i < n; i += HasPayload(h, events[i]) ? 2 : 1) starts.push_back(i);
  // Resolves the event index: the explicit one, or the first event matching `want`.
  auto pick = [&](auto want, absl::string_view what) -> absl::StatusOr<uint32_t> {
    if (spec.event >= 0) {
      if (static_cast<uint64_t>(spec.event) >= n) {
        return refuse(absl::StrFormat("event %d is past its %d events", spec.event, n));
      }
      if (!std::binary_search(starts.begin(), starts.end(), spec.event)) {
        return refuse(absl::StrFormat("slot %d is a payload slot, not an event", spec.event));
      }
      if (!want(events[spec.event])) return refuse(absl::StrCat("slot ", spec.event, " is no ", what));
      return static_cast<uint32_t>(spec.event);
    }
    for (uint32_t i : starts) {
      if (want(events[i])) return i;
    }
    return refuse(absl::StrCat("it has no ", what));
  };
  auto kind_is = [&](SiteKind kind, int exit) {
    return [&layout, kind, exit](const abi::Event& e) {
      const uint32_t site = abi::TagSite(e.tag);
      return abi::TagHasPayload(e.tag) && site < layout.sites.size() &&
             layout.sites[site].kind == kind && (exit < 0 || abi::TagIsExit(e.tag) == (exit == 1));
    };
  };
  // Removes event i and its payload slot: later slots move up, attempted shrinks.
  auto remove = [&](uint32_t i) -> absl::Status {
    if (h.attempted > h.capacity) return refuse("it dropped events (nothing may move)");
    const uint32_t width = HasPayload(h, events[i]) ? 2 : 1;
    if (i + width > n) return refuse("its payload fell past capacity");
    std::copy(events + i + width, events + n, events + i);
    std::fill(events + n - width, events + n, abi::Event{0, 0});
    h.attempted -= width;
    return absl::OkStatus();
  };

  switch (spec.kind) {
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
    case Corruption::kMissingUnit:
      std::fill_n(words.data() + spec.record * abi::RecordWords(capacity),
                  abi::RecordWords(capacity), 0u);
      return absl::OkStatus();
    case Corruption::kIncompleteUnit:
      h.flags &= ~abi::kFlagComplete;
      h.attempted = 0;
      h.end_clock = 0;
      h.end_globaltimer_lo = h.end_globaltimer_hi = 0;
      return absl::OkStatus();
    case Corruption::kSmIdOutOfRange:
      if (layout.clock.num_sms == 0) return refuse("the layout's clock.num_sms is 0 (unknown)");
      h.sm_id = layout.clock.num_sms;
      Reseal(h);
      return absl::OkStatus();
    case Corruption::kEndBeforeStart: {
      const uint64_t start = uint64_t{h.start_globaltimer_lo} | uint64_t{h.start_globaltimer_hi} << 32;
      if (start < 1000) return refuse("its start globaltimer is below 1000 ns");
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
        return refuse(absl::StrFormat(
            "it recorded %d of %d slots; dropping needs every slot written (script at least "
            "capacity events)",
            h.attempted, h.capacity));
      }
      h.attempted += spec.amount == 0 ? 1 : spec.amount;
      return absl::OkStatus();
    case Corruption::kUnpairedEvent:
      if (starts.empty() || h.attempted > h.capacity) return refuse("it has no event to remove");
      return remove(starts.back());
    case Corruption::kExitWithoutBegin: {
      ASSIGN_OR_RETURN(uint32_t i, pick([&](const abi::Event& e) {
        const uint32_t site = abi::TagSite(e.tag);
        return !abi::TagIsExit(e.tag) && (site >= num_sites || SiteKindNests(layout.sites[site].kind));
      }, "entry event"));
      events[i].tag |= abi::kExitFlag;
      return absl::OkStatus();
    }
    case Corruption::kMismatchedNesting: {
      if (num_sites < 2) return refuse("the layout has fewer than 2 sites");
      ASSIGN_OR_RETURN(uint32_t i, pick([&](const abi::Event& e) {
        const uint32_t site = abi::TagSite(e.tag);
        return abi::TagIsExit(e.tag) && (site >= num_sites || SiteKindNests(layout.sites[site].kind));
      }, "exit event"));
      // Another nesting site, so the exit closes the wrong region (not an instant).
      uint32_t other = abi::TagSite(events[i].tag);
      for (uint32_t k = 1; k < num_sites; ++k) {
        other = (abi::TagSite(events[i].tag) + k) % num_sites;
        if (SiteKindNests(layout.sites[other].kind)) break;
      }
      if (other == abi::TagSite(events[i].tag)) return refuse("the layout has one nesting site");
      events[i].tag = abi::MakeTag(other, true) | (events[i].tag & abi::kPayloadFlag);
      return absl::OkStatus();
    }
    case Corruption::kUnknownSite: {
      ASSIGN_OR_RETURN(uint32_t i, pick([](const abi::Event&) { return true; }, "event"));
      events[i].tag = abi::MakeTag(num_sites, abi::TagIsExit(events[i].tag)) |
                      (events[i].tag & abi::kPayloadFlag);
      return absl::OkStatus();
    }
    case Corruption::kClockBackwards: {
      if (starts.empty()) return refuse("it has no event");
      const uint32_t i = spec.event >= 0 ? static_cast<uint32_t>(spec.event) : starts.back();
      if (i >= n) return refuse(absl::StrFormat("event %d is past its %d events", i, n));
      auto at = std::lower_bound(starts.begin(), starts.end(), i);
      if (at == starts.end() || *at != i) return refuse("the chosen slot is a payload slot");
      const uint32_t prev = at == starts.begin() ? h.start_clock : events[*(at - 1)].clock;
      events[i].clock = prev - (spec.amount == 0 ? 100000u : spec.amount);
      return absl::OkStatus();
    }
    case Corruption::kReleaseBeforeArrivals: {
      ASSIGN_OR_RETURN(uint32_t i, pick(kind_is(SiteKind::kPhaseWait, 0), "phase wait entry"));
      if (i + 1 >= n) return refuse("its payload fell past capacity");
      const uint32_t site = abi::TagSite(events[i].tag);
      const uint32_t barrier = events[i + 1].tag, phase = events[i + 1].clock;
      ++events[i + 1].clock;
      // Its release: the next exit of the same wait (same site, barrier and phase).
      for (auto it = std::upper_bound(starts.begin(), starts.end(), i); it != starts.end(); ++it) {
        const abi::Event& e = events[*it];
        if (*it + 1 < n && abi::TagIsExit(e.tag) && abi::TagHasPayload(e.tag) &&
            abi::TagSite(e.tag) == site && events[*it + 1].tag == barrier &&
            events[*it + 1].clock == phase) {
          ++events[*it + 1].clock;
          break;
        }
      }
      return absl::OkStatus();
    }
    case Corruption::kArrivalCountMismatch: {
      ASSIGN_OR_RETURN(uint32_t i, pick(kind_is(SiteKind::kBarrierArrive, -1), "barrier arrival"));
      if (i + 1 >= n) return refuse("its payload fell past capacity");
      ++events[i + 1].clock;  // payload b: the phase
      return absl::OkStatus();
    }
    case Corruption::kAsyncEndWithoutBegin: {
      ASSIGN_OR_RETURN(uint32_t i, pick(kind_is(SiteKind::kAsyncCopy, 0), "async copy begin"));
      return remove(i);
    }
    case Corruption::kAsyncNeverCompleted: {
      ASSIGN_OR_RETURN(uint32_t i, pick(kind_is(SiteKind::kAsyncCopy, 1), "async copy end"));
      return remove(i);
    }
  }
  return refuse("unknown corruption");
}

}  // namespace warptrace::testing
