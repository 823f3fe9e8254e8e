// The fixed ids of warptrace's Perfetto output (perfetto_writer.h): packet sequences, the
// clock, track uuids and interned debug-annotation names. Shared by the writer's parts and
// by readers and tests.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_IDS_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_IDS_H_

#include <cstdint>

namespace warptrace {

// Sequence ids and the clock id the writer uses (perfetto_writer.h).
inline constexpr uint32_t kPerfettoTrackSequence = 1;
inline constexpr uint32_t kPerfettoUnitSequence = 2;
inline constexpr uint32_t kPerfettoGpuClockId = 64;

namespace perfetto_internal {

// Track uuids: a kind in the top bits, an id below.
inline constexpr uint64_t kRootUuid = 1;
inline constexpr uint64_t kSmUuidBase = uint64_t{1} << 40;
inline constexpr uint64_t kSmCounterUuidBase = uint64_t{2} << 40;
inline constexpr uint64_t kNoRecordUuid = uint64_t{3} << 40;
inline constexpr uint64_t kUnitUuidBase = uint64_t{4} << 40;
// A unit's async lanes: kAsyncUuidBase + record_index * kLanesPerUnit + lane (the Timeline
// contract allows at most kMaxAsyncLanes, timeline_check.h).
inline constexpr uint64_t kAsyncUuidBase = uint64_t{5} << 40;
inline constexpr uint64_t kLanesPerUnit = 256;
// A block's stage-ring counters: kRingUuidBase + block_linear * kMaxRings + ring.
inline constexpr uint64_t kRingUuidBase = uint64_t{6} << 40;
inline constexpr uint32_t kMaxRings = 64;
// With thread-block clusters (TraceLayout::cluster of more than one CTA): a cluster's group
// track (kClusterUuidBase + its linear id) holds one track per CTA (kCtaUuidBase + the
// block's linear id), which holds the CTA's unit tracks.
inline constexpr uint64_t kClusterUuidBase = uint64_t{7} << 40;
inline constexpr uint64_t kCtaUuidBase = uint64_t{8} << 40;

// Interned debug annotation names (per unit, re-declared with the unit's state).
inline constexpr uint64_t kSiteAnnotationIid = 1;
inline constexpr uint64_t kKindAnnotationIid = 2;
inline constexpr uint64_t kOriginAnnotationIid = 3;
// Declared only when the layout has barrier-arrive sites (their instants carry them).
inline constexpr uint64_t kBarrierAnnotationIid = 4;
inline constexpr uint64_t kPhaseAnnotationIid = 5;

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_IDS_H_
