#include "tests/fuzz/seed_corpus.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/imports/sidecar.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/fuzz/dump_fuzz_target.h"

namespace warptrace::fuzz {
namespace {

using ::warptrace::testing::Corruption;
using ::warptrace::testing::CorruptionName;
using ::warptrace::testing::CorruptionSpec;
using ::warptrace::testing::InjectCorruption;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

// 3 blocks x 2 warps, capacity 6 (exactly full), 3 sites: kernel { a, b }.
BufferParams WarpParams() {
  BufferParams p;
  p.unit_kind = static_cast<uint8_t>(UnitKind::kWarp);
  p.grid_x = 3;
  p.block_x = 64;
  p.capacity = 6;
  p.num_sites = 3;
  p.num_sms = 4;
  return p;
}

UnitScript NestedScript() {
  UnitScript s;
  s.Begin(0).Work(10).Region(1, 100).Region(2, 50).Work(10).End(0);
  return s;
}

absl::StatusOr<std::vector<uint32_t>> Synthesize(const BufferParams& params,
                                                 const UnitScript& script,
                                                 const SynthOptions& options = {}) {
  TraceSynthesizer synth(LayoutFromParams(params), options);
  synth.SetScript(script);
  return synth.Build();
}

std::string LayoutJson(const TraceLayout& layout) {
  std::string text;
  llvm::raw_string_ostream os(text);
  WriteLayoutJson(layout, os);
  os.flush();
  return text;
}

// One Mosaic trace of `entries` words: header, then (tag, clock) pairs as far as they fit.
void AppendMosaicTrace(uint32_t start_lo, uint32_t smid, uint32_t traces_used,
                       const std::vector<std::pair<uint32_t, uint32_t>>& events,
                       uint32_t entries, std::vector<uint32_t>& out) {
  std::vector<uint32_t> w(entries, 0u);
  w[0] = start_lo;
  w[1] = smid;
  w[2] = traces_used;
  for (size_t i = 0; i < events.size() && 3 + 2 * i + 1 < entries; ++i) {
    w[3 + 2 * i] = events[i].first;
    w[3 + 2 * i + 1] = events[i].second;
  }
  out.insert(out.end(), w.begin(), w.end());
}

}  // namespace

absl::StatusOr<std::vector<Seed>> SeedCorpus() {
  std::vector<Seed> seeds;
  auto add_buffer = [&](std::string name, const BufferParams& p,
                        const std::vector<uint32_t>& words) {
    seeds.push_back({std::move(name), EncodeBufferInput(p, words)});
  };

  // ---- Valid buffers ------------------------------------------------------------------
  const BufferParams warp = WarpParams();
  ASSIGN_OR_RETURN(const std::vector<uint32_t> warp_words, Synthesize(warp, NestedScript()));
  add_buffer("buffer_warp_nested", warp, warp_words);
  {
    BufferParams p = warp;
    p.flags = kFlagAllowTruncated | kFlagCompensateOverhead;
    add_buffer("buffer_warp_nested_repair_compensate", p, warp_words);
    p.flags = kFlagBeginEnd | kFlagOddNames;
    add_buffer("buffer_warp_nested_begin_end_odd_names", p, warp_words);
    p.flags = kFlagShared;
    add_buffer("buffer_warp_nested_shared", p, warp_words);
  }
  {
    // Warpgroups long enough to calibrate, %clock wrapping, coarse globaltimer.
    BufferParams p;
    p.unit_kind = static_cast<uint8_t>(UnitKind::kWarpgroup);
    p.grid_x = 2;
    p.grid_y = 2;
    p.block_x = 256;
    p.capacity = 6;
    p.num_sites = 2;
    p.nominal_sm_clock_khz = 1'980'000;
    UnitScript body;
    body.Region(1, 20'000);
    UnitScript script;
    script.Begin(0).Repeat(2, body).End(0);
    SynthOptions options;
    options.cycles_per_ns = 1.75;
    options.start_clock = 0xffffff00u;
    options.clock_offset_per_record = 123'457;
    options.unit_stagger_ns = 500;
    options.globaltimer_tick_ns = 1000;
    ASSIGN_OR_RETURN(const std::vector<uint32_t> words, Synthesize(p, script, options));
    add_buffer("buffer_warpgroup_calibrated_wrap", p, words);
    p.flags = kFlagCompensateOverhead | kFlagBeginEnd;
    add_buffer("buffer_warpgroup_calibrated_wrap_compensate", p, words);
    p.flags = 0;
    p.min_calibration_100ns = 0xffff;  // too short to calibrate: nominal fallback
    add_buffer("buffer_warpgroup_nominal_fallback", p, words);
  }
  {
    // Whole-block units, every other block sampled.
    BufferParams p;
    p.unit_kind = static_cast<uint8_t>(UnitKind::kBlock);
    p.grid_x = 6;
    p.block_x = 96;
    p.capacity = 4;
    p.num_sites = 2;
    p.sample_begin = 1;
    p.sample_stride = 2;
    UnitScript script;
    script.Region(0, 30).Work(5).Region(1, 70);
    ASSIGN_OR_RETURN(const std::vector<uint32_t> words, Synthesize(p, script));
    add_buffer("buffer_block_sampled", p, words);
  }
  {
    // A custom unit: threads [32, 96) of a 128-thread block, recorded by thread 37.
    BufferParams p;
    p.unit_kind = static_cast<uint8_t>(UnitKind::kCustom);
    p.grid_x = 2;
    p.block_x = 128;
    p.custom_first = 32;
    p.custom_count = 64;
    p.custom_recorder = 5;
    p.capacity = 4;
    p.num_sites = 1;
    UnitScript script;
    script.Begin(0).Work(7).Region(0, 3).End(0);
    ASSIGN_OR_RETURN(const std::vector<uint32_t> words, Synthesize(p, script));
    add_buffer("buffer_custom_recursive_site", p, words);
  }
  {
    // Overflow: 6 events into 4 slots (the synthesizer counts and drops, like the device).
    BufferParams p = warp;
    p.capacity = 4;
    ASSIGN_OR_RETURN(const std::vector<uint32_t> words, Synthesize(p, NestedScript()));
    add_buffer("buffer_overflowed_strict", p, words);
    p.flags = kFlagAllowTruncated;
    add_buffer("buffer_overflowed_repaired", p, words);
  }
  {
    // A buffer one record short of its layout, checked as is (decode's DataLoss).
    BufferParams p = warp;
    p.flags = kFlagExactSize;
    std::vector<uint32_t> words = warp_words;
    words.resize(words.size() - abi::RecordWords(p.capacity));
    add_buffer("buffer_wrong_size", p, words);
  }

  // ---- Every corruption class, strict and repaired --------------------------------------
  const TraceLayout warp_layout = LayoutFromParams(warp);
  for (Corruption kind :
       {Corruption::kBadMagic, Corruption::kBadVersion, Corruption::kBadHeaderWords,
        Corruption::kBadChecksum, Corruption::kWrongBlock, Corruption::kWrongUnit,
        Corruption::kWrongCapacity, Corruption::kMissingUnit, Corruption::kIncompleteUnit,
        Corruption::kSmIdOutOfRange, Corruption::kEndBeforeStart, Corruption::kBadGlobaltimer,
        Corruption::kDroppedEvents, Corruption::kUnpairedEvent, Corruption::kExitWithoutBegin,
        Corruption::kMismatchedNesting, Corruption::kUnknownSite,
        Corruption::kClockBackwards}) {
    std::vector<uint32_t> words = warp_words;
    CorruptionSpec spec;
    spec.kind = kind;
    spec.record = 1;
    RETURN_IF_ERROR(InjectCorruption(warp_layout, spec, absl::MakeSpan(words)));
    BufferParams p = warp;
    add_buffer(absl::StrCat("corrupt_", CorruptionName(kind), "_strict"), p, words);
    p.flags = kFlagAllowTruncated;
    add_buffer(absl::StrCat("corrupt_", CorruptionName(kind), "_repaired"), p, words);
  }

  // ---- Hand-offs (trace version 2 payloads): arrivals, phase waits, async copies ----------
  {
    // 2 blocks x (producer warp, consumer warp); sites 4 barrier_arrive, 5 phase_wait,
    // 6 async_copy (LayoutFromParams cycles through every kind), 3 kernel, 0 region.
    BufferParams p = warp;
    p.grid_x = 2;
    p.num_sites = 7;
    p.capacity = 14;
    const TraceLayout layout = LayoutFromParams(p);
    UnitScript producer;
    producer.Begin(3).AsyncBegin(6, 0, 0).Work(50).AsyncEnd(6, 0, 0).Arrive(4, 0, 0)
        .WaitPhase(5, 1, 0, 100).Arrive(4, 0, 1).End(3);
    UnitScript consumer;
    consumer.Begin(3).WaitPhase(5, 0, 0, 80).Region(0, 30).Arrive(4, 1, 0).End(3);
    TraceSynthesizer synth(layout);
    for (uint64_t r = 0; r < 4; r += 2) {
      synth.SetUnitScript(r, producer);
      synth.SetUnitScript(r + 1, consumer);
    }
    ASSIGN_OR_RETURN(const std::vector<uint32_t> words, synth.Build());
    add_buffer("buffer_handoffs", p, words);
    BufferParams q = p;
    q.flags = kFlagAllowTruncated | kFlagBeginEnd | kFlagCompensateOverhead;
    add_buffer("buffer_handoffs_repair_begin_end", q, words);
    const std::pair<Corruption, uint64_t> corruptions[] = {
        {Corruption::kReleaseBeforeArrivals, 1}, {Corruption::kArrivalCountMismatch, 0},
        {Corruption::kAsyncEndWithoutBegin, 0}, {Corruption::kAsyncNeverCompleted, 2}};
    for (const auto& [kind, record] : corruptions) {
      std::vector<uint32_t> bad = words;
      CorruptionSpec spec;
      spec.kind = kind;
      spec.record = record;
      RETURN_IF_ERROR(InjectCorruption(layout, spec, absl::MakeSpan(bad)));
      add_buffer(absl::StrCat("corrupt_", CorruptionName(kind), "_strict"), p, bad);
      BufferParams repaired = p;
      repaired.flags = kFlagAllowTruncated;
      add_buffer(absl::StrCat("corrupt_", CorruptionName(kind), "_repaired"), repaired, bad);
    }
  }

  // ---- warptrace sidecars ---------------------------------------------------------------
  const std::string warp_json = LayoutJson(warp_layout);
  seeds.push_back({"sidecar_warp", EncodeTextInput(FuzzMode::kSidecarJson, 0, warp_json)});
  {
    BufferParams p;
    p.unit_kind = static_cast<uint8_t>(UnitKind::kCustom);
    p.grid_x = 4;
    p.block_x = 256;
    p.custom_first = 128;
    p.custom_count = 128;
    p.capacity = 12;
    p.num_sites = 4;
    p.sample_begin = 1;
    p.sample_end = 3;
    p.num_sms = 132;
    p.flags = kFlagShared | kFlagOddNames;
    seeds.push_back({"sidecar_custom_shared_sampled",
                     EncodeTextInput(FuzzMode::kSidecarJson, kFlagAllowTruncated,
                                     LayoutJson(LayoutFromParams(p)))});
  }
  seeds.push_back({"sidecar_unknown_version",
                   EncodeTextInput(FuzzMode::kSidecarJson, 0,
                                   absl::StrReplaceAll(warp_json, {{"\"version\": 2",
                                                                    "\"version\": 3"}}))});

  // ---- Mosaic GPU buffers and sidecars --------------------------------------------------
  constexpr uint32_t kExit = abi::kExitFlag;
  MosaicParams mosaic;
  mosaic.grid_x = 2;
  mosaic.block_x = 256;  // 2 warpgroups per block
  mosaic.entries = 3 + 2 * 4;
  mosaic.num_names = 3;
  {
    std::vector<uint32_t> words;
    const std::vector<std::pair<uint32_t, uint32_t>> nested = {
        {0, 100}, {1, 150}, {1 | kExit, 400}, {0 | kExit, 420}};
    AppendMosaicTrace(0xfffff000u, 3, 8, nested, mosaic.entries, words);  // start lo wraps
    AppendMosaicTrace(0x00001000u, 3, 8, nested, mosaic.entries, words);
    AppendMosaicTrace(0x00002000u, 7, 4, {{2, 10}, {2 | kExit, 90}}, mosaic.entries, words);
    AppendMosaicTrace(0x00002100u, 7, 0, {}, mosaic.entries, words);
    seeds.push_back({"mosaic_valid", EncodeMosaicInput(mosaic, words)});
    MosaicParams p = mosaic;
    p.flags = kFlagAllowTruncated | kFlagBeginEnd;
    seeds.push_back({"mosaic_valid_repair_begin_end", EncodeMosaicInput(p, words)});

    // Trace 1 used 12 words (6 events) of its 8-word event area: an overflow.
    std::vector<uint32_t> overflow = words;
    overflow[mosaic.entries + 2] = 12;
    seeds.push_back({"mosaic_overflow", EncodeMosaicInput(mosaic, overflow)});
    p.flags = kFlagAllowTruncated;
    seeds.push_back({"mosaic_overflow_repaired", EncodeMosaicInput(p, overflow)});

    // Mosaic's older format counted the 3 header words: an odd traces_used.
    std::vector<uint32_t> odd = words;
    odd[2] = 11;
    seeds.push_back({"mosaic_odd_traces_used", EncodeMosaicInput(mosaic, odd)});
  }
  {
    MosaicParams p = mosaic;
    p.grid_x = 1;
    p.block_x = 64;
    p.warp_scope = 1;  // 2 warps
    p.entries = 3 + 2 * 2;
    p.num_names = 1;
    p.sm_clock_khz = 1'410'000;
    std::vector<uint32_t> words;
    AppendMosaicTrace(5000, 1, 4, {{0, 7}, {0 | kExit, 9}}, p.entries, words);
    AppendMosaicTrace(5100, 1, 4, {{0, 1u << 31}, {0 | kExit, 3}}, p.entries, words);
    seeds.push_back({"mosaic_warp_scope_clock_wrap", EncodeMosaicInput(p, words)});
  }
  seeds.push_back(
      {"mosaic_sidecar",
       EncodeTextInput(FuzzMode::kMosaicJson, 0,
                       R"({"format": "mosaic-gpu", "grid": [2, 1], "block": [256],)"
                       R"( "entries_per_warpgroup": 11, "trace_scope": "warpgroup",)"
                       R"( "names": ["load", "mma", "store"], "kernel_name": "attention"})")});
  seeds.push_back(
      {"mosaic_sidecar_warp_no_scope_field",
       EncodeTextInput(FuzzMode::kMosaicJson, kFlagAllowTruncated,
                       R"({"format": "mosaic-gpu", "grid": [1, 1, 3], "block": [128, 1, 1],)"
                       R"( "entries_per_warpgroup": 5, "names": ["x"]})")});
  return seeds;
}

}  // namespace warptrace::fuzz
