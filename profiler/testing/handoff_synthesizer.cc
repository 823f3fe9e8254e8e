#include "profiler/testing/handoff_synthesizer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace warptrace::testing {
namespace {

// Builds one unit's script from absolute cycle times (all units start at cycle 0).
class TimedScript {
 public:
  explicit TimedScript(uint64_t step) : step_(step) {}
  uint64_t now() const { return now_; }
  // The time of the next stamp: at least one step after the last one, and not before `at`.
  uint64_t Next(uint64_t at = 0) const { return std::max(now_ + step_, at); }
  UnitScript& At(uint64_t t) {
    script_.Work(t - now_);
    now_ = t;
    return script_;
  }
  UnitScript Take() { return std::move(script_); }

 private:
  uint64_t step_;
  uint64_t now_ = 0;
  UnitScript script_;
};

}  // namespace

absl::StatusOr<HandoffTrace> SynthesizeHandoffs(const HandoffSpec& spec) {
  if (spec.blocks == 0 || spec.stages == 0 || spec.iterations == 0) {
    return absl::InvalidArgumentError("a hand-off trace needs blocks, stages and iterations");
  }
  const uint32_t S = spec.stages;
  HandoffTrace out;
  TraceLayout& layout = out.layout;
  layout.kernel_name = "handoffs";
  layout.grid = {spec.blocks, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.sites = {{kHandoffKernelSite, "kernel", SiteKind::kKernel, "handoffs"},
                  {kHandoffArriveFullSite, "arrive full", SiteKind::kBarrierArrive, "p/arrive"},
                  {kHandoffArriveEmptySite, "arrive empty", SiteKind::kBarrierArrive, "c/arrive"},
                  {kHandoffWaitFullSite, "wait full", SiteKind::kPhaseWait, "c/wait"},
                  {kHandoffWaitEmptySite, "wait empty", SiteKind::kPhaseWait, "p/wait"},
                  {kHandoffCopySite, "copy", SiteKind::kAsyncCopy, "p/copy"},
                  {kHandoffMmaSite, "mma", SiteKind::kRegion, "c/mma"}};
  if (spec.derived_copy_ends) layout.sites[kHandoffCopySite].copy_engine = CopyEngine::kTma2d;
  if (spec.barrier_table) {
    for (uint32_t s = 0; s < S; ++s) layout.barriers.push_back({s, absl::StrCat("full[", s, "]"), 1});
    for (uint32_t s = 0; s < S; ++s) {
      layout.barriers.push_back({S + s, absl::StrCat("empty[", s, "]"), 1});
    }
  }
  TimedScript producer(spec.step_cycles), consumer(spec.step_cycles);
  std::vector<uint64_t> full_arrival(spec.iterations), empty_arrival(spec.iterations);
  producer.At(producer.Next()).Begin(kHandoffKernelSite);
  consumer.At(consumer.Next()).Begin(kHandoffKernelSite);
  for (uint32_t i = 0; i < spec.iterations; ++i) {
    const uint32_t s = i % S, k = i / S;
    if (i >= S) {
      producer.At(producer.Next()).WaitBegin(kHandoffWaitEmptySite, S + s, k - 1);
      producer.At(producer.Next(empty_arrival[i - S] + spec.step_cycles))
          .WaitEnd(kHandoffWaitEmptySite, S + s, k - 1);
      ++out.arrival_links_per_block;
    }
    if (spec.derived_copy_ends) {
      producer.At(producer.Next()).CopyBegin(kHandoffCopySite, s, k);
      producer.At(producer.Next(producer.now() + spec.load_cycles));
    } else {
      producer.At(producer.Next()).AsyncBegin(kHandoffCopySite, i, s);
      producer.At(producer.Next(producer.now() + spec.load_cycles))
          .AsyncEnd(kHandoffCopySite, i, s);
    }
    ++out.copy_links_per_block;
    full_arrival[i] = producer.Next();
    producer.At(full_arrival[i]).Arrive(kHandoffArriveFullSite, s, k);

    consumer.At(consumer.Next()).WaitBegin(kHandoffWaitFullSite, s, k);
    consumer.At(consumer.Next(full_arrival[i] + spec.step_cycles)).WaitEnd(kHandoffWaitFullSite, s, k);
    ++out.arrival_links_per_block;
    consumer.At(consumer.Next()).Begin(kHandoffMmaSite);
    consumer.At(consumer.Next(consumer.now() + spec.mma_cycles)).End(kHandoffMmaSite);
    empty_arrival[i] = consumer.Next();
    consumer.At(empty_arrival[i]).Arrive(kHandoffArriveEmptySite, S + s, k);
  }
  producer.At(producer.Next()).End(kHandoffKernelSite);
  consumer.At(consumer.Next()).End(kHandoffKernelSite);
  UnitScript p = producer.Take(), c = consumer.Take();
  layout.capacity = static_cast<uint32_t>(std::max(p.slots(), c.slots()));

  SynthOptions options = spec.synth;
  options.event_cost_cycles = 0;
  options.clock_offset_per_record = 0;
  options.unit_stagger_ns = 0;
  TraceSynthesizer synth(layout, options);
  for (uint32_t b = 0; b < spec.blocks; ++b) {
    synth.SetUnitScript(2 * b, p);
    synth.SetUnitScript(2 * b + 1, c);
  }
  ASSIGN_OR_RETURN(out.words, synth.Build());
  return out;
}

}  // namespace warptrace::testing
