#include "profiler/testing/pipeline_synthesizer.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace::testing {
namespace {

// A hand-off event's payload (links.h): the barrier and the phase.
struct Payload {
  uint32_t barrier;
  uint32_t phase;
};

// One unit's script as it is being simulated: stamps at exact relative times.
class UnitSim {
 public:
  explicit UnitSim(uint32_t cost) : cost_(cost) {}
  // An event after `work` cycles; returns its stamp time.
  uint64_t Stamp(uint32_t site, bool exit, uint64_t work, const Payload* payload = nullptr) {
    script_.Work(work);
    if (payload != nullptr) {
      script_.PayloadTag(abi::MakeTag(site, exit), payload->barrier, payload->phase);
    } else if (exit) {
      script_.End(site);
    } else {
      script_.Begin(site);
    }
    if (exit) {
      Slice& s = slices_[open_.back()];
      open_.pop_back();
      now_ += work + cost_;
      s.end_ns = static_cast<int64_t>(now_);
    } else {
      now_ += work + cost_;
      open_.push_back(static_cast<uint32_t>(slices_.size()));
      slices_.push_back({site, static_cast<uint32_t>(open_.size() - 1),
                         static_cast<int64_t>(now_), static_cast<int64_t>(now_), false});
    }
    return now_;
  }
  // A wait on `site` released at `release` (relative time): returns its entry ordinal. With
  // a payload (trace v2) it is a phase wait on (barrier, phase).
  uint32_t Wait(uint32_t site, uint64_t release, const Payload* payload = nullptr) {
    const uint32_t ordinal = static_cast<uint32_t>(slices_.size());
    const uint64_t begin = Stamp(site, false, 0, payload);
    Stamp(site, true, release > begin ? release - begin : 0, payload);
    return ordinal;
  }
  // An async copy's issue (begin) or observed completion (end) after `work` cycles, with
  // its payload (issue, barrier): events that open or close no slice.
  void Async(uint32_t site, bool end, uint32_t issue, uint32_t barrier, uint64_t work) {
    script_.Work(work);
    if (end) {
      script_.AsyncEnd(site, issue, barrier);
    } else {
      script_.AsyncBegin(site, issue, barrier);
    }
    now_ += work + cost_;
  }
  // A barrier arrival (an instant, trace v2) right after the previous event: its stamp time.
  uint64_t Arrive(uint32_t site, const Payload& payload) {
    script_.Arrive(site, payload.barrier, payload.phase);
    now_ += cost_;
    return now_;
  }
  uint64_t now() const { return now_; }
  UnitScript& script() { return script_; }
  // Entry ordinal -> index in UnitTimeline::slices (ordered by begin, then depth, stably).
  std::vector<uint32_t> SliceIndexes() const {
    std::vector<uint32_t> order(slices_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (slices_[a].begin_ns != slices_[b].begin_ns) return slices_[a].begin_ns < slices_[b].begin_ns;
      return slices_[a].depth < slices_[b].depth;
    });
    std::vector<uint32_t> index(order.size());
    for (uint32_t i = 0; i < order.size(); ++i) index[order[i]] = i;
    return index;
  }

 private:
  uint32_t cost_;
  uint64_t now_ = 0;
  UnitScript script_;
  std::vector<Slice> slices_;
  std::vector<uint32_t> open_;
};

TraceLayout PipelineLayout(const PipelineSpec& spec) {
  TraceLayout layout;
  layout.kernel_name = "pipeline";
  layout.device_name = "synthesized pipeline";
  layout.grid = {spec.blocks, 1, 1};
  layout.block = {128 * (1 + spec.consumers), 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.clock.nominal_sm_clock_khz = 1'000'000;  // 1 cycle/ns, as synthesized
  layout.clock.num_sms = spec.num_virtual_sms;
  layout.sites.push_back({kPipelineKernelSite, "pipeline", SiteKind::kKernel, "pipeline"});
  layout.sites.push_back({kPipelineLoadSite, "load", SiteKind::kRegion, "pipeline > load"});
  layout.sites.push_back({kPipelineMmaSite, "mma", SiteKind::kRegion, "pipeline > mma"});
  if (spec.handoff_payloads) {
    // As the builder records hand-offs: one wait and one arrive site per barrier array, the
    // element in the payload; the barrier table names the elements.
    for (const char* barrier : {"full", "empty"}) {
      const uint32_t id = static_cast<uint32_t>(layout.sites.size());
      layout.sites.push_back({id, absl::StrCat("wait ", barrier), SiteKind::kPhaseWait,
                              absl::StrCat("pipeline > wait ", barrier)});
    }
    for (const char* barrier : {"full", "empty"}) {
      const uint32_t id = static_cast<uint32_t>(layout.sites.size());
      layout.sites.push_back({id, absl::StrCat("arrive ", barrier), SiteKind::kBarrierArrive,
                              absl::StrCat("pipeline > arrive ", barrier)});
    }
    layout.sites.push_back({7, "copy", SiteKind::kAsyncCopy, "pipeline > load > copy"});
    for (const char* barrier : {"full", "empty"}) {
      for (uint32_t s = 0; s < spec.stages; ++s) {
        const uint32_t id = static_cast<uint32_t>(layout.barriers.size());
        layout.barriers.push_back({id, absl::StrCat(barrier, "[", s, "]"),
                                   barrier[0] == 'f' ? 1u : spec.consumers});
      }
    }
  } else {
    for (const char* barrier : {"full", "empty"}) {
      for (uint32_t s = 0; s < spec.stages; ++s) {
        const uint32_t id = static_cast<uint32_t>(layout.sites.size());
        layout.sites.push_back({id, absl::StrCat(barrier, "[", s, "]"), SiteKind::kBarrierWait,
                                absl::StrCat("pipeline > barrier ", barrier)});
      }
    }
  }
  if (spec.loop_sites) {
    const uint32_t id = static_cast<uint32_t>(layout.sites.size());
    layout.sites.push_back({id, "iteration", SiteKind::kLoopBody, "pipeline > loop i"});
  }
  layout.unit_roles.push_back("producer");
  for (uint32_t c = 0; c < spec.consumers; ++c) layout.unit_roles.push_back("consumer");
  // kernel + per iteration: a wait and a region (2 events each), with payloads a wait takes
  // 4 slots and the arrival after the region 2.
  const uint32_t per_iteration = spec.handoff_payloads ? 12 : 4;
  layout.capacity = 2 + (per_iteration + (spec.loop_sites ? 2 : 0)) * spec.iterations;
  return layout;
}

uint64_t Lookup(const absl::flat_hash_map<uint64_t, uint64_t>& map, uint64_t key) {
  auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

// Simulates block `b`: its units' scripts and links.
std::vector<UnitSim> SimulateBlock(const PipelineSpec& spec, uint32_t b, uint64_t start_ns,
                                   std::mt19937& rng, std::vector<HandoffLink>& links) {
  std::uniform_int_distribution<uint32_t> jitter(0, spec.jitter_cycles);
  const PipelineSites sites = PipelineSitesOf(spec);
  const bool v2 = spec.handoff_payloads;
  const auto scale_it = spec.block_scale.find(b);
  const uint64_t scale = scale_it == spec.block_scale.end() ? 1 : scale_it->second;
  const uint32_t units = 1 + spec.consumers;
  std::vector<UnitSim> sim(units, UnitSim(spec.event_cost_cycles));
  for (UnitSim& u : sim) u.Stamp(kPipelineKernelSite, false, 0);
  std::vector<uint64_t> full_arrival(spec.iterations);
  std::vector<std::vector<uint64_t>> empty_arrival(units, std::vector<uint64_t>(spec.iterations));
  // (to_unit, entry ordinal, from_unit, arrival) until the slice indexes are known.
  struct Pending { uint32_t to, ordinal, from; uint64_t at; };
  std::vector<Pending> pending;
  for (uint32_t i = 0; i < spec.iterations; ++i) {
    const uint32_t s = i % spec.stages;
    // Trace v2 payloads: full[s] is barrier s, empty[s] barrier stages + s; iteration i
    // uses phase i / stages of its stage's barriers.
    const Payload full{s, i / spec.stages};
    const Payload empty{spec.stages + s, i / spec.stages};
    UnitSim& p = sim[0];
    if (spec.loop_sites) p.Stamp(sites.iteration, false, 0);
    if (i >= spec.stages) {
      uint64_t release = 0;
      for (uint32_t c = 1; c < units; ++c) release = std::max(release, empty_arrival[c][i - spec.stages]);
      const Payload waited{empty.barrier, empty.phase - 1};
      const uint32_t ordinal =
          p.Wait(sites.empty_wait + (v2 ? 0 : s), release, v2 ? &waited : nullptr);
      for (uint32_t c = 1; c < units; ++c) pending.push_back({0, ordinal, c, empty_arrival[c][i - spec.stages]});
    }
    p.Stamp(kPipelineLoadSite, false, 0);
    const uint64_t load = spec.load_cycles * scale + Lookup(spec.unit_extra, uint64_t{b} << 32) +
                          jitter(rng);
    if (v2) {
      // The load is an async copy issued as it starts and observed complete as it ends.
      p.Async(sites.copy, false, i, full.barrier, 0);
      p.Async(sites.copy, true, i, full.barrier, load);
      full_arrival[i] = p.Stamp(kPipelineLoadSite, true, 0);
    } else {
      full_arrival[i] = p.Stamp(kPipelineLoadSite, true, load);
    }
    if (v2) full_arrival[i] = p.Arrive(sites.full_arrive, full);
    if (spec.loop_sites) p.Stamp(sites.iteration, true, 0);
    for (uint32_t c = 1; c < units; ++c) {
      UnitSim& u = sim[c];
      if (spec.loop_sites) u.Stamp(sites.iteration, false, 0);
      const uint32_t ordinal =
          u.Wait(sites.full_wait + (v2 ? 0 : s), full_arrival[i], v2 ? &full : nullptr);
      pending.push_back({c, ordinal, 0, full_arrival[i]});
      u.Stamp(kPipelineMmaSite, false, 0);
      auto extra = spec.iteration_extra_mma.find(i);
      empty_arrival[c][i] = u.Stamp(
          kPipelineMmaSite, true,
          spec.mma_cycles * scale + Lookup(spec.unit_extra, (uint64_t{b} << 32) | c) +
              (extra == spec.iteration_extra_mma.end() ? 0 : extra->second) + jitter(rng));
      if (v2) empty_arrival[c][i] = u.Arrive(sites.empty_arrive, empty);
      if (spec.loop_sites) u.Stamp(sites.iteration, true, 0);
    }
  }
  for (UnitSim& u : sim) u.Stamp(kPipelineKernelSite, true, 0);
  std::vector<std::vector<uint32_t>> index(units);
  for (uint32_t u = 0; u < units; ++u) index[u] = sim[u].SliceIndexes();
  for (const Pending& l : pending) {
    links.push_back({b, l.from, static_cast<int64_t>(start_ns + l.at), l.to, index[l.to][l.ordinal]});
  }
  return sim;
}

}  // namespace

PipelineSites PipelineSitesOf(const PipelineSpec& spec) {
  PipelineSites out;
  if (spec.handoff_payloads) {
    out.full_wait = 3;
    out.empty_wait = 4;
    out.full_arrive = 5;
    out.empty_arrive = 6;
    out.copy = 7;
    out.iteration = 8;
  } else {
    out.full_wait = 3;
    out.empty_wait = 3 + spec.stages;
    out.iteration = 3 + 2 * spec.stages;
  }
  return out;
}

absl::StatusOr<PipelineTrace> SynthesizePipeline(const PipelineSpec& spec) {
  if (spec.blocks == 0 || spec.consumers == 0 || spec.stages == 0 || spec.iterations == 0) {
    return absl::InvalidArgumentError(
        "a pipeline needs at least one block, consumer, stage and iteration");
  }
  PipelineTrace out;
  out.layout = PipelineLayout(spec);
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.event_cost_cycles = spec.event_cost_cycles;
  options.prologue_cycles = 0;
  options.epilogue_cycles = 0;
  options.num_virtual_sms = spec.num_virtual_sms;
  options.version = spec.version;
  out.start_ns = options.start_globaltimer_ns;
  TraceSynthesizer synth(out.layout, options);
  const uint32_t units = 1 + spec.consumers;
  std::mt19937 rng(spec.seed);
  for (uint32_t b = 0; b < spec.blocks; ++b) {
    std::vector<UnitSim> sim = SimulateBlock(spec, b, out.start_ns, rng, out.links);
    for (uint32_t u = 0; u < units; ++u) {
      synth.SetUnitScript(uint64_t{b} * units + u, sim[u].script());
    }
  }
  ASSIGN_OR_RETURN(out.words, synth.Build());
  return out;
}

}  // namespace warptrace::testing
