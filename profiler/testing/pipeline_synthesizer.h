// Test-only: a warp-specialized producer/consumer pipeline, simulated exactly and written as
// a trace buffer (trace_synthesizer.h) together with its hand-off links
// (profiler/analysis/handoff.h) — the known answer for the analysis' waiting shares and
// critical paths.
//
// Each block has one producer warpgroup (unit 0, role "producer") and `consumers` consumer
// warpgroups (units 1.., role "consumer"), sharing `stages` buffers guarded by barriers
// full[s] and empty[s]. Iteration i uses stage s = i % stages:
//   producer:  [wait empty[s] (i >= stages)] load  -> arrives on full[s] when load ends
//   consumer:  wait full[s]  mma                    -> arrives on empty[s] when mma ends
// all inside one `kernel` region per unit. Time is exact: the SM clock runs at 1 cycle/ns
// (calibrated or nominal alike), every unit of every block starts at the same globaltimer
// (SynthOptions::start_globaltimer_ns), a stamp costs `event_cost_cycles` on top of the
// work before it, and a wait's exit is stamped at max(its entry, the releasing arrival) +
// event cost. Every wait is recorded, also the ones that did not block (zero or cost-only
// length). A link is emitted for every arrival a wait consumed (one per consumer for an
// empty[s] wait), including arrivals that came before the wait began.
//
//   PipelineSpec spec;
//   spec.load_cycles = 300;  spec.mma_cycles = 100;   // producer-bound
//   ASSERT_OK_AND_ASSIGN(PipelineTrace p, SynthesizePipeline(spec));
//   AnalysisOptions options;  options.handoffs = p.links;
//
// Closed forms (event cost 0, one consumer, N iterations, L = load, M = mma, per block):
//   producer-bound (L >= M, stages >= 1): the block runs N*L + M; the consumer waits
//     L + (N-1)*(L-M); the critical path is the producer's loads (N*L) then the last mma.
//   consumer-bound (M >= L, stages >= 1): the block runs L + N*M; the consumer waits L; the
//     critical path is the first load then every mma.
#ifndef WARPTRACE_PROFILER_TESTING_PIPELINE_SYNTHESIZER_H_
#define WARPTRACE_PROFILER_TESTING_PIPELINE_SYNTHESIZER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "format/layout.h"
#include "profiler/analysis/handoff.h"
#include "profiler/testing/trace_synthesizer.h"

namespace warptrace::testing {

// Site ids of the pipeline's layout.
inline constexpr uint32_t kPipelineKernelSite = 0;  // "pipeline" (SiteKind::kKernel)
inline constexpr uint32_t kPipelineLoadSite = 1;    // "load"
inline constexpr uint32_t kPipelineMmaSite = 2;     // "mma"
// Without hand-off payloads, full[s] is site 3 + s; empty[s] is site 3 + stages + s
// (SiteKind::kBarrierWait); "iteration" (SiteKind::kLoopBody) is site 3 + 2 * stages when
// PipelineSpec::loop_sites. With them, PipelineSitesOf says.

struct PipelineSpec {
  uint32_t blocks = 4;
  uint32_t consumers = 1;
  uint32_t stages = 2;
  uint32_t iterations = 8;
  uint64_t load_cycles = 300;
  uint64_t mma_cycles = 100;
  uint32_t event_cost_cycles = 0;
  uint32_t num_virtual_sms = 4;   // block b runs on SM b % num_virtual_sms
  // Per block: its load and mma take this many times longer (default 1).
  absl::flat_hash_map<uint32_t, uint32_t> block_scale;
  // Per (block, unit): extra cycles added to every mma (consumers) or load (producer).
  absl::flat_hash_map<uint64_t, uint64_t> unit_extra;  // key: block << 32 | unit
  // Per iteration index: extra cycles added to that iteration's mma in every consumer.
  absl::flat_hash_map<uint32_t, uint64_t> iteration_extra_mma;
  // Every load and mma takes 0..jitter_cycles extra cycles, drawn uniformly from a
  // generator seeded with `seed` (deterministic).
  uint32_t jitter_cycles = 0;
  uint32_t seed = 1;
  // Wrap each unit's iteration i in a loop-body slice "iteration" (site 3 + 2 * stages).
  bool loop_sites = false;
  // Record the hand-offs as trace version 2 does (profiler/trace/links.h), the way the
  // builder emits them: the waits are phase waits "wait full" / "wait empty" (one site per
  // barrier array) with (barrier, phase) payloads, and every arrival is a barrier-arrive
  // instant "arrive full" / "arrive empty" right after the load / mma that released it
  // (the waits it releases are released at the instant's stamp); each load is an async copy
  // "copy" (issue i, completing on full[s]) issued as the load begins and observed complete
  // as it ends. The layout's barrier
  // table names full[s] (id s) and empty[s] (id stages + s). Sites: PipelineSitesOf.
  // `links` still lists the links the trace's payloads resolve to (the expected answer).
  bool handoff_payloads = false;
  // The header's version (SynthOptions::version). The copies record their ends (paired by
  // issue): a version-5 trace reads them so only while their site's engine does not complete
  // on a phase barrier (CopyEngine::kNone, as synthesized); 4 keeps that meaning for any.
  uint32_t version = abi::kTraceVersion;
};

// Where the pipeline's layout puts its wait, arrive and loop sites.
struct PipelineSites {
  uint32_t full_wait = 0;    // full[s]: full_wait + s (v1), or the one "wait full" site (v2)
  uint32_t empty_wait = 0;   // likewise for empty[s]
  uint32_t full_arrive = 0;  // v2 only: "arrive full"
  uint32_t empty_arrive = 0; // v2 only: "arrive empty"
  uint32_t copy = 0;         // v2 only: "copy", the producer's async copy inside each load
  uint32_t iteration = 0;    // "iteration", with PipelineSpec::loop_sites
};
PipelineSites PipelineSitesOf(const PipelineSpec& spec);

struct PipelineTrace {
  TraceLayout layout;               // grid (blocks,1,1), warpgroup units, role table
  std::vector<uint32_t> words;
  std::vector<HandoffLink> links;   // sorted by block
  uint64_t start_ns = 0;            // every unit's start globaltimer
};

// InvalidArgument for zero blocks, consumers, stages or iterations; the synthesizer's errors.
absl::StatusOr<PipelineTrace> SynthesizePipeline(const PipelineSpec& spec);

}  // namespace warptrace::testing

#endif  // WARPTRACE_PROFILER_TESTING_PIPELINE_SYNTHESIZER_H_
