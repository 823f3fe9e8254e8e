// Test-only: builds trace buffers that look exactly like what the device recorder writes,
// from a per-unit event script, and damages them in each way the dump must detect. Used by
// the profiler's tests, the dump benchmark, the fuzzer's seed corpus and the CLI tests.
//
// A script is the sequence of record points one trace unit executes, with the SM cycles
// spent before each:
//
//   UnitScript body;
//   body.Region(/*site=*/1, /*cycles=*/300)        // load: begin, 300 cycles, end
//       .Region(/*site=*/2, /*cycles=*/800);       // mma
//   UnitScript script;
//   script.Begin(0).Repeat(64, body).Work(50).End(0);   // kernel { 64 x (load, mma) }
//
//   SynthOptions options;
//   options.start_clock = 0xffffff00u;   // %clock wraps inside the first region
//   options.cycles_per_ns = 1.98;
//   TraceSynthesizer synth(layout, options);
//   synth.SetScript(script);                        // every unit runs `script` ...
//   synth.SetUnitScript(3, other);                  // ... except record 3
//   absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
//   ASSERT_THAT(InjectCorruption(layout, {Corruption::kUnknownSite, /*record=*/2}, *words),
//               IsOk());
//
// Clock model of a synthesized unit (record index r):
//   start globaltimer  = start_globaltimer_ns + r * unit_stagger_ns (quantized, see below)
//   start clock        = start_clock + r * clock_offset_per_record (mod 2^32)
//   event i's clock    = start clock + prologue_cycles + sum of the gaps before events 0..i,
//                        where each event's gap is the Work() before it plus event_cost_cycles
//   end clock          = last event's clock + trailing Work() + epilogue_cycles
//   end globaltimer    = start globaltimer + elapsed cycles / cycles_per_ns
// Globaltimer stamps are rounded down to a multiple of globaltimer_tick_ns, like hardware
// whose globaltimer ticks coarsely. The SM id of block b is b % num_virtual_sms.
// Events past the layout's capacity are counted in `attempted` and not written, as on the
// device; a payload step at the capacity edge writes its event without its payload, as the
// recorder does. Event i above is a step; with payloads, slot indices differ from step
// indices. Everything is deterministic.
#ifndef WARPTRACE_PROFILER_TESTING_TRACE_SYNTHESIZER_H_
#define WARPTRACE_PROFILER_TESTING_TRACE_SYNTHESIZER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "format/trace_abi.h"

namespace warptrace::testing {

// The record points one unit executes, in order.
class UnitScript {
 public:
  struct Step {
    uint32_t tag = 0;         // abi::MakeTag(site, exit), or MakePayloadTag with a payload
    uint64_t gap_cycles = 0;  // SM cycles since the previous stamp (Work + event cost)
    // Version-2 payload (tag has abi::kPayloadFlag): the step takes 2 slots, the event and
    // then abi::Payload{a, b}, exactly as recorder.cuh's RecordWithPayload writes them.
    uint32_t a = 0;
    uint32_t b = 0;
  };

  // Entry / exit of `site` after the Work() accumulated so far.
  UnitScript& Begin(uint32_t site);
  UnitScript& End(uint32_t site);
  // An event with an arbitrary tag (to build malformed sequences).
  UnitScript& Tag(uint32_t tag);
  // An event with a payload slot: `tag` gets abi::kPayloadFlag; 2 slots (links.h says
  // what (a, b) mean per site kind).
  UnitScript& PayloadTag(uint32_t tag, uint32_t a, uint32_t b);

  // Version-2 hand-off events (links.h), each an event plus its payload slot:
  // a barrier arrival (kBarrierArrive site) counting towards `phase` of `barrier`;
  UnitScript& Arrive(uint32_t site, uint32_t barrier, uint32_t phase);
  // the start and the release of a wait on `phase` of `barrier` (kPhaseWait site), and
  // WaitPhase = WaitBegin, Work(cycles), WaitEnd;
  UnitScript& WaitBegin(uint32_t site, uint32_t barrier, uint32_t phase);
  UnitScript& WaitEnd(uint32_t site, uint32_t barrier, uint32_t phase);
  UnitScript& WaitPhase(uint32_t site, uint32_t barrier, uint32_t phase, uint64_t cycles);
  // an async copy's issue and its observed completion (kAsyncCopy site), paired by
  // (site, issue); `barrier` is the phase barrier it completes on or kNoBarrier. From
  // version 5 a copy whose site's engine completes on a phase barrier (CompletesOnBarrier)
  // is read by CopyBegin's payload instead unless the site keeps an observed end
  // (SiteInfo::end_observed; CopyEndDerived): write such traces with CopyBegin, or with
  // SynthOptions::version 4 or an end_observed site to keep these events' meaning;
  UnitScript& AsyncBegin(uint32_t site, uint32_t issue, uint32_t barrier);
  UnitScript& AsyncEnd(uint32_t site, uint32_t issue, uint32_t barrier);
  // the begin of a version-5 copy on a phase barrier (format/links.h): it completes `phase`
  // of `barrier` (a multicast copy: phase & 0xffff | ctaMask << 16 as `phase`), and records
  // no end (the dump derives it from the releases of that phase).
  UnitScript& CopyBegin(uint32_t site, uint32_t barrier, uint32_t phase);
  // `cycles` pass before the next event (or before the epilogue when none follows).
  UnitScript& Work(uint64_t cycles);
  // Begin(site), Work(cycles), End(site).
  UnitScript& Region(uint32_t site, uint64_t cycles);
  // Appends `body`'s steps `times` times (its trailing Work included each time).
  UnitScript& Repeat(uint32_t times, const UnitScript& body);

  const std::vector<Step>& steps() const { return steps_; }
  uint64_t trailing_cycles() const { return pending_; }
  size_t size() const { return steps_.size(); }
  // Event slots the script takes (= the header's `attempted`): a step with a payload takes 2.
  uint64_t slots() const { return slots_; }

 private:
  std::vector<Step> steps_;
  uint64_t pending_ = 0;
  uint64_t slots_ = 0;
};

struct SynthOptions {
  double cycles_per_ns = 1.5;              // the SM clock the synthesized units ran at
  uint32_t start_clock = 1000;             // record 0's start %clock; near 2^32 to wrap
  uint32_t clock_offset_per_record = 0;    // added per record index (each SM's own clock)
  uint64_t start_globaltimer_ns = 1'000'000'000;
  uint64_t unit_stagger_ns = 0;            // later records start this much later each
  uint64_t globaltimer_tick_ns = 1;        // globaltimer resolution
  uint32_t event_cost_cycles = 20;         // the recorder's own cost, added to every gap
  uint32_t prologue_cycles = 10;           // start stamp -> first event
  uint32_t epilogue_cycles = 10;           // last event -> end stamp
  uint32_t num_virtual_sms = 4;            // sm_id = block_linear % num_virtual_sms
  // The header's version (abi::kMinTraceVersion .. abi::kTraceVersion): older versions
  // read some events differently (format/links.h), e.g. 4 for copies on a phase barrier
  // that record their ends.
  uint32_t version = abi::kTraceVersion;
};

class TraceSynthesizer {
 public:
  // `layout` must pass ValidateLayout (checked by Build).
  explicit TraceSynthesizer(TraceLayout layout, SynthOptions options = {});

  // The script of every record without its own.
  void SetScript(UnitScript script) { default_ = std::move(script); }
  // The script of record `record_index` (buffer position, see trace_abi.h).
  void SetUnitScript(uint64_t record_index, UnitScript script);

  // The whole buffer, BufferBytes(layout) / 4 words, every record complete.
  // InvalidArgument: the layout fails ValidateLayout, or a script has a gap of 2^32 cycles or
  // more between two stamps (the device clock could not represent it: the dump's contract
  // is that consecutive stamps are less than 2^32 cycles apart).
  absl::StatusOr<std::vector<uint32_t>> Build() const;

  // Writes record `record_index` of `words` (which must be the whole buffer) in place.
  // InvalidArgument as Build, or for a record index or buffer size that does not fit.
  absl::Status WriteRecord(uint64_t record_index, absl::Span<uint32_t> words) const;

  const TraceLayout& layout() const { return layout_; }
  const SynthOptions& options() const { return options_; }

  // The unrounded globaltimer at record `record_index`'s start stamp, and the elapsed ns
  // between its start and end stamps (before tick rounding): the ground truth the clock
  // calibration should recover.
  uint64_t StartNs(uint64_t record_index) const;
  double ElapsedNs(uint64_t record_index) const;

 private:
  const UnitScript& ScriptFor(uint64_t record_index) const;

  TraceLayout layout_;
  SynthOptions options_;
  UnitScript default_;
  absl::flat_hash_map<uint64_t, UnitScript> per_record_;
};

// Every way a buffer can be wrong that the dump must name.
enum class Corruption {
  // Header, found by decode (per record) or fatal in decode:
  kBadMagic,         // magic overwritten
  kBadVersion,       // version 2, checksum kept consistent
  kBadHeaderWords,   // header_words 17, checksum kept consistent
  kBadChecksum,      // sm_id changed without updating the checksum
  kWrongBlock,       // block_linear + 1, checksum kept consistent
  kWrongUnit,        // unit_index + 1, checksum kept consistent
  kWrongCapacity,    // capacity - 1, checksum kept consistent (decode: fatal DataLoss)
  kMissingUnit,      // the whole record zeroed: the unit never ran
  kIncompleteUnit,   // epilogue never ran: no kFlagComplete, attempted 0, end stamps 0
  kSmIdOutOfRange,   // sm_id = layout.clock.num_sms (needs num_sms > 0), checksum consistent
  kEndBeforeStart,   // end globaltimer set 1000 ns before the start
  kBadGlobaltimer,   // bit 63 of the start globaltimer set (and of the end one, so the end
                     // stays after the start): a stamp past kMaxGlobaltimerNs
  // Events, found by verify:
  kDroppedEvents,    // attempted = capacity + `amount` (the device counted, never wrote)
  kUnpairedEvent,    // the last event (and its payload) removed (attempted - 1 or 2)
  kExitWithoutBegin, // event `event` (default: the first entry) turned into an exit
  kMismatchedNesting,// event `event` (default: the first exit) exits another (valid) site
  kUnknownSite,      // event `event` (default 0) gets site id layout.sites.size()
  kClockBackwards,   // event `event` (default: the last) stamped `amount` cycles before its
                     // predecessor (default 100000)
  // Hand-offs (version 2, links.h), found by the block-level pass (verify.h); `event` is a
  // slot index of an event (never a payload slot):
  kReleaseBeforeArrivals,  // wait `event` (default: the first kPhaseWait entry) and its
                           // release wait on the next phase instead: released before that
                           // phase's arrivals (when the script's come after it)
  kArrivalCountMismatch,   // arrival `event` (default: the first kBarrierArrive) counts
                           // towards the next phase: one fewer in its phase, one more in the
                           // next (a finding where the barrier table has a count)
  kAsyncEndWithoutBegin,   // async begin `event` (default: the first kAsyncCopy begin) and
                           // its payload removed (later slots move up, attempted - 2)
  kAsyncNeverCompleted,    // async end `event` (default: the first kAsyncCopy end) removed
};
const char* CorruptionName(Corruption corruption);

struct CorruptionSpec {
  Corruption kind = Corruption::kBadMagic;
  uint64_t record = 0;
  int64_t event = -1;    // which event, for event corruptions; -1 = the default above
  uint32_t amount = 0;   // kDroppedEvents: extra attempted (default 1);
                         // kClockBackwards: cycles (default 100000)
};

// Applies `spec` to a complete buffer of `layout` in place. InvalidArgument (and `words`
// unchanged) when it cannot apply: record out of range, a record that is not a valid
// complete record, an event index past the record's events or an event of the wrong kind
// (e.g. kMismatchedNesting needs an exit and >= 2 sites; kSmIdOutOfRange needs num_sms > 0;
// the hand-off corruptions need an event of their site kind with its payload, and the two
// removals a record that dropped nothing). Event picks never land on a payload slot.
absl::Status InjectCorruption(const TraceLayout& layout, const CorruptionSpec& spec,
                              absl::Span<uint32_t> words);

}  // namespace warptrace::testing

#endif  // WARPTRACE_PROFILER_TESTING_TRACE_SYNTHESIZER_H_
