// The host/device trace ABI: the one layout shared by the device recorder, the host dump,
// files on disk and tests. Freestanding: compiles under NVRTC (no standard headers), nvcc
// and any host C++17 compiler. Change it only together with the dump, and bump
// kTraceVersion when the layout changes.
//
// A launch's trace buffer is one contiguous array of records, in this order:
//
//   record (sample_ordinal, unit) at word offset
//       (sample_ordinal * units_per_block + unit) * RecordWords(capacity)
//
// where sample_ordinal numbers the recorded (sampled) blocks in increasing linear block id.
// Each record is a RecordHeader (kHeaderWords uint32 words) followed by `capacity` event
// slots of 2 words each (Event). All words are little-endian uint32.
//
// Version 2 added payloads: an event whose tag has kPayloadFlag set is
// followed by one Payload slot (2 words) that belongs to it. A payload slot is counted by
// the plan and by `attempted` like an event slot, and is written together with its event or
// not at all (an event is never stored without its payload). What the two payload words mean
// depends on the site's kind (format/layout.h SiteKind; the link contract is in
// format/links.h). Version 1 (no payloads; bits 0..30 of a tag are the site id) is
// still read: kMinTraceVersion.
//
// Version 3 covers the event words: the epilogue folds the record's stored slots (the first
// min(attempted, capacity), payload slots included, in order) into the checksum word,
// starting from the header checksum (EventChecksumStep), so a complete version-3 record's
// checksum is FoldEventSlots(HeaderChecksum(...), slots). A record without kFlagComplete
// (the epilogue never ran) keeps the plain header checksum, as do versions 1 and 2, which
// are still read (their events are covered by no check). Bytes on disk are unchanged.
//
// Version 4 leaves out the payloads the dump can derive (format/links.h): a phase wait's
// enter, and the begins and ends of in-order async groups (cp.async groups, bulk store
// groups, wgmma groups), whose issue numbers are their order in the unit. Fewer slots per
// unit and a plain record (no second store, no payload registers) at those points. A
// version-3 reader would find those spans unpaired, so the version says it.
//
// The header's `attempted` counts every event the unit tried to record, including those
// past capacity: dropped = attempted - capacity when attempted > capacity. Events past
// capacity are counted, never written.
//
// The host zero-fills the buffer before launch, so a record whose magic is 0 belongs to a
// unit that never ran its prologue. The prologue writes the identity words and start stamps
// with flags = 0; the epilogue writes attempted, the end stamps and kFlagComplete, so a
// record with magic but no kFlagComplete is a unit that started and never finished.
#ifndef WARPTRACE_FORMAT_TRACE_ABI_H_
#define WARPTRACE_FORMAT_TRACE_ABI_H_

namespace warptrace {
namespace abi {

// Functions here run on both sides: NVRTC and nvcc (which define __CUDACC__) reject an
// unannotated function in device code.
#if defined(__CUDACC__)
#define WARPTRACE_ABI_FN __host__ __device__ constexpr
#else
#define WARPTRACE_ABI_FN constexpr
#endif

typedef unsigned int u32;
typedef unsigned long long u64;
static_assert(sizeof(u32) == 4, "u32 must be 4 bytes");
static_assert(sizeof(u64) == 8, "u64 must be 8 bytes");

// NVRTC emits every namespace-scope constexpr variable as a .global symbol in the PTX and
// cubin of each profiled kernel (9 symbols, 2.6 KB of cubin); under NVRTC the constants are
// unnamed-enum enumerators instead, with the same values and underlying type.
#if defined(__CUDACC_RTC__)
#define WARPTRACE_ABI_CONSTANT(name, value) enum : u32 { name = (value) }
#else
#define WARPTRACE_ABI_CONSTANT(name, value) constexpr u32 name = (value)
#endif

// 'WTRC' read as a little-endian word.
WARPTRACE_ABI_CONSTANT(kTraceMagic, 0x43525457u);
WARPTRACE_ABI_CONSTANT(kTraceVersion, 5u);
// The first version whose complete records fold their events into the checksum word.
WARPTRACE_ABI_CONSTANT(kEventChecksumVersion, 3u);
// The oldest version the dump reads (version 1: no payload slots).
WARPTRACE_ABI_CONSTANT(kMinTraceVersion, 1u);

// Header flag bits.
WARPTRACE_ABI_CONSTANT(kFlagComplete, 1u << 0);  // the unit's epilogue ran
WARPTRACE_ABI_CONSTANT(kFlagShared, 1u << 1);    // events were staged in shared memory
// The unit's recorder left the kernel through an early return (the builder's Return), not
// at the kernel's end. Set since the flag existed (no version bump: older readers refuse
// the unknown bit, and older buffers never carry it).
WARPTRACE_ABI_CONSTANT(kFlagEarlyReturn, 1u << 2);

// Event tag (version 2): bits 0..29 the record-site id, bit 30 the payload flag (the next
// slot is this event's Payload), bit 31 the exit flag (a span's exit, an async span's end).
// Version 1 tags: bits 0..30 the site id, bit 31 the exit flag (see TagSiteV1).
WARPTRACE_ABI_CONSTANT(kExitFlag, 1u << 31);
WARPTRACE_ABI_CONSTANT(kPayloadFlag, 1u << 30);
WARPTRACE_ABI_CONSTANT(kSiteIdMask, kPayloadFlag - 1u);
WARPTRACE_ABI_CONSTANT(kMaxSites, kSiteIdMask + 1u);  // ids 0 .. 2^30-1

struct RecordHeader {
  u32 magic;             // kTraceMagic
  u32 version;           // kTraceVersion
  u32 sm_id;             // %smid of the SM the block ran on
  u32 block_linear;      // blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)
  u32 unit_index;        // trace unit within the block
  u32 attempted;         // events the unit tried to record (may exceed capacity)
  u32 capacity;          // event slots in this record
  u32 flags;             // kFlag* bits
  u32 start_clock;       // %clock at unit start (SM cycles, wraps at 2^32)
  u32 end_clock;         // %clock at unit end
  u32 start_globaltimer_lo;  // %globaltimer (ns) at unit start, low and high words
  u32 start_globaltimer_hi;
  u32 end_globaltimer_lo;    // %globaltimer (ns) at unit end
  u32 end_globaltimer_hi;
  u32 header_words;      // kHeaderWords: lets the dump detect a wrong layout
  u32 checksum;          // HeaderChecksum(magic, version, sm_id, block_linear, unit_index,
                         // capacity); version 3, complete: then folded with the events
};

struct Event {
  u32 tag;    // site id | kExitFlag for the exit of a region | kPayloadFlag (version 2)
  u32 clock;  // %clock when recorded
};

// The slot after an event with kPayloadFlag (version 2): data the dump needs to link the
// event to events of other units or to its own later events (format/links.h).
struct Payload {
  u32 a;
  u32 b;
};

WARPTRACE_ABI_CONSTANT(kHeaderWords, sizeof(RecordHeader) / 4);
WARPTRACE_ABI_CONSTANT(kEventWords, sizeof(Event) / 4);

static_assert(sizeof(RecordHeader) == 64, "RecordHeader is 16 words");
static_assert(kHeaderWords == 16, "RecordHeader is 16 words");
static_assert(sizeof(Event) == 8, "Event is 2 words");
static_assert(sizeof(Payload) == sizeof(Event), "a payload fills one event slot");
// NVRTC has no offsetof (no <cstddef>, no __builtin_offsetof); every host build checks these.
#if !defined(__CUDACC_RTC__)
static_assert(__builtin_offsetof(RecordHeader, magic) == 0, "magic first");
static_assert(__builtin_offsetof(RecordHeader, attempted) == 20, "attempted at word 5");
static_assert(__builtin_offsetof(RecordHeader, capacity) == 24, "capacity at word 6");
static_assert(__builtin_offsetof(RecordHeader, start_clock) == 32, "start_clock at word 8");
static_assert(__builtin_offsetof(RecordHeader, start_globaltimer_lo) == 40, "gt at word 10");
static_assert(__builtin_offsetof(RecordHeader, checksum) == 60, "checksum last");
#endif

// Words of one record holding `capacity` events.
WARPTRACE_ABI_FN u64 RecordWords(u64 capacity) { return kHeaderWords + kEventWords * capacity; }
WARPTRACE_ABI_FN u64 RecordBytes(u64 capacity) { return 4 * RecordWords(capacity); }
// Bytes of a whole buffer of `records` records.
WARPTRACE_ABI_FN u64 BufferBytes(u64 records, u64 capacity) {
  return records * RecordBytes(capacity);
}

WARPTRACE_ABI_FN u32 HeaderChecksum(u32 magic, u32 version, u32 sm_id, u32 block_linear,
                                    u32 unit_index, u32 capacity) {
  return magic ^ version ^ sm_id ^ block_linear ^ unit_index ^ capacity;
}

// One stored slot (an event or a payload: words lo, hi) folded into a running checksum: FNV-1a
// over the slot's two words. Each step is a bijection of `sum` for fixed words and of each
// word for a fixed `sum`, so changing any one word of any slot always changes the result.
WARPTRACE_ABI_CONSTANT(kEventChecksumPrime, 0x01000193u);
WARPTRACE_ABI_FN u32 EventChecksumStep(u32 sum, u32 lo, u32 hi) {
  return ((((sum ^ lo) * kEventChecksumPrime) ^ hi) * kEventChecksumPrime);
}
// `sum` folded with the first `slots` slots at `words` (2 words each): the dump's side of
// the version-3 checksum (the recorder folds while it copies or rereads its slots).
WARPTRACE_ABI_FN u32 FoldEventSlots(u32 sum, const u32* words, u64 slots) {
  for (u64 i = 0; i < slots; ++i) sum = EventChecksumStep(sum, words[2 * i], words[2 * i + 1]);
  return sum;
}

WARPTRACE_ABI_FN u32 MakeTag(u32 site, bool exit) {
  return (site & kSiteIdMask) | (exit ? kExitFlag : 0u);
}
// A version-2 tag whose event carries a payload slot.
WARPTRACE_ABI_FN u32 MakePayloadTag(u32 site, bool exit) {
  return MakeTag(site, exit) | kPayloadFlag;
}
WARPTRACE_ABI_FN u32 TagSite(u32 tag) { return tag & kSiteIdMask; }
WARPTRACE_ABI_FN bool TagIsExit(u32 tag) { return (tag & kExitFlag) != 0; }
WARPTRACE_ABI_FN bool TagHasPayload(u32 tag) { return (tag & kPayloadFlag) != 0; }
// The site id of a version-1 tag (no payload flag: bit 30 belongs to the id). Ids at or past
// kMaxSites are outside every valid site table, so they read as unknown sites.
WARPTRACE_ABI_FN u32 TagSiteV1(u32 tag) { return tag & (kExitFlag - 1u); }

}  // namespace abi
}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_TRACE_ABI_H_
