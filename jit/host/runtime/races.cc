#include "jit/host/runtime/races.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/sanitizer.h"

namespace warptrace::host {
namespace {

constexpr uint64_t kExempt = RaceShadow::kExempt;
constexpr uint64_t kReadSetBit = RaceShadow::kReadSetBit;


// Whether every component of read `r` happened before a thread whose clock is `vc`.
inline bool SpanOrdered(const RaceShadow::Read& r, ClockView vc) {
  return vc.AllAtLeast(r.First(), uint32_t{r.span} + 1, r.stride, RaceClock(r.epoch));
}

// A write of the cells `mask` of the word whose `n` cells (1: a word cell, 4: a split
// word's bytes) are `w`: every read of them must be ordered before it; they now hold only
// the write.
template <typename IsOrdered, typename Report>
void WriteWord(RaceShadow* shadow, RaceCell* w, uint32_t n, uint32_t mask, bool set,
               uint64_t epoch, const char* at, IsOrdered& is_ordered, const VectorClock& vc,
               Report& report) {
  auto is_ordered_span = [&](const RaceShadow::Read& r) {
    return r.span == 0 ? is_ordered(r.epoch) : SpanOrdered(r, vc.View());
  };
  if (set) {
    uint64_t index = w[0].read & ~kReadSetBit;
    bool left = false;  // reads of other bytes of the word
    for (const RaceShadow::Read& r : shadow->Set(index)) {
      if ((r.mask & mask) != 0 && !is_ordered_span(r)) {
        for (uint32_t k = 0; k <= r.span; ++k) {
          if (!is_ordered(r.Epoch(k))) report({false, r.Epoch(k), r.at});
        }
      }
      left = left || (r.mask & ~mask) != 0;
    }
    if (!left) {  // no read left: back to single reads
      shadow->Release(index);
      for (uint32_t k = 0; k < n; ++k) w[k].read = 0;
    } else {
      index = shadow->Own(w, n);
      std::vector<RaceShadow::Read>& reads = shadow->Set(index);
      size_t kept = 0;
      for (RaceShadow::Read r : reads) {
        r.mask &= ~mask;
        if (r.mask != 0) reads[kept++] = r;
      }
      reads.resize(kept);
    }
  }
  for (uint32_t k = 0; k < n; ++k) {
    if ((mask >> k & 1u) == 0) continue;
    if (!set && !is_ordered(w[k].read)) report({false, w[k].read, w[k].read_at});
    w[k].write = epoch;
    w[k].write_at = at;
    if ((w[k].read & kReadSetBit) == 0) {
      w[k].read = 0;
      w[k].read_at = nullptr;
    }
  }
}

// A read of the cells `mask` of the word (`n` cells, as WriteWord): it replaces the reads
// ordered before it; reads unordered with it are kept beside it in the word's read set.
template <typename IsOrdered>
void ReadWord(RaceShadow* shadow, RaceCell* w, uint32_t n, uint32_t mask, bool set,
              uint64_t epoch, const char* at, IsOrdered& is_ordered) {
  if (!set) {
    bool covers = true;
    for (uint32_t k = 0; k < n; ++k) {
      if ((mask >> k & 1u) != 0 && w[k].read != epoch && !is_ordered(w[k].read)) {
        covers = false;
      }
    }
    if (covers) {
      for (uint32_t k = 0; k < n; ++k) {
        if ((mask >> k & 1u) == 0) continue;
        w[k].read = epoch;
        w[k].read_at = at;
      }
      return;
    }
    // Two unordered reads: the word's single reads become its read set.
    const uint64_t index = shadow->NewSet();
    std::vector<RaceShadow::Read>& reads = shadow->Set(index);
    for (uint32_t k = 0; k < n; ++k) {
      if (w[k].read == 0) continue;
      bool merged = false;
      for (RaceShadow::Read& r : reads) {
        if (r.epoch == w[k].read) {
          r.mask |= 1u << k;
          merged = true;
        }
      }
      if (!merged) reads.push_back({w[k].read, w[k].read_at, 1u << k});
    }
    std::sort(reads.begin(), reads.end(),
              [](const RaceShadow::Read& a, const RaceShadow::Read& b) {
                return RaceComponent(a.epoch) < RaceComponent(b.epoch);
              });
    for (uint32_t k = 0; k < n; ++k) w[k].read = kReadSetBit | index;
  }
  // The set is sorted by component: a read replaces its own component's older reads of the
  // same bytes (program order, or in-order retirement for an async agent); reads of other
  // components stay (a write checks them all), so a read costs a search, not a scan.
  std::vector<RaceShadow::Read>& reads = shadow->Set(shadow->Own(w, n));
  RaceShadow::Unfold(reads);
  const uint32_t component = RaceComponent(epoch);
  if (reads.empty() || RaceComponent(reads.back().epoch) < component) {
    reads.push_back({epoch, at, mask});  // threads mostly read in order: no search
    return;
  }
  const size_t lo = static_cast<size_t>(
      std::lower_bound(reads.begin(), reads.end(), component,
                       [](const RaceShadow::Read& r, uint32_t c) {
                         return RaceComponent(r.epoch) < c;
                       }) -
      reads.begin());
  size_t hi = lo;
  bool present = false;
  for (; hi < reads.size() && RaceComponent(reads[hi].epoch) == component; ++hi) {
    if (reads[hi].epoch == epoch) {
      reads[hi].mask |= mask;
      present = true;
    } else {
      reads[hi].mask &= ~mask;  // an older read of these bytes by the same component
    }
  }
  if (!present) {
    reads.insert(reads.begin() + static_cast<std::ptrdiff_t>(lo), {epoch, at, mask});
    ++hi;
  }
  const auto begin = reads.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto end = reads.begin() + static_cast<std::ptrdiff_t>(hi);
  reads.erase(std::remove_if(begin, end, [](const RaceShadow::Read& r) { return r.mask == 0; }),
              end);
}

// Where a whole-word read by `component` at `epoch` and `at` goes in a word cell's read set
// `reads` (sorted by component; threads mostly read in order, but the thread that completes
// a barrier runs on first: a short scan from the end finds the place).
struct ReadPlace {
  enum Kind { kNone, kExtend, kReplace, kInsert } kind;  // kNone: the general path's case
  size_t i;  // the entry to extend or replace, or where to insert
};
ReadPlace PlaceRead(const std::vector<RaceShadow::Read>& reads, uint32_t component,
                    uint64_t epoch, const char* at) {
  if (reads.empty()) return {ReadPlace::kInsert, 0};
  // The next lane of the warp, or warp of the block, that read it last: one entry more.
  if ((reads.back().next == epoch && reads.back().at == at) ||
      reads.back().Extends(component, epoch, at)) {
    return {ReadPlace::kExtend, reads.size() - 1};
  }
  size_t i = reads.size();
  for (int steps = 0; i > 0 && reads[i - 1].First() > component; --i) {
    if (++steps > 4) return {ReadPlace::kNone, 0};
  }
  if (i > 0 && reads[i - 1].Last() >= component) {  // maybe its own older read
    return {reads[i - 1].span != 0 ? ReadPlace::kNone : ReadPlace::kReplace, i - 1};
  }
  if (i > 0 && reads[i - 1].Extends(component, epoch, at)) return {ReadPlace::kExtend, i - 1};
  return {ReadPlace::kInsert, i};
}
void PutRead(std::vector<RaceShadow::Read>& reads, ReadPlace place, uint32_t component,
             uint64_t epoch, const char* at) {
  switch (place.kind) {
    case ReadPlace::kExtend:
      reads[place.i].Extend(component, epoch, at);
      break;
    case ReadPlace::kReplace:
      reads[place.i] = {epoch, at, 1u};  // its own older read of the word
      break;
    case ReadPlace::kInsert:
      reads.insert(reads.begin() + static_cast<std::ptrdiff_t>(place.i), {epoch, at, 1u});
      break;
    case ReadPlace::kNone:
      break;
  }
}

// A plain read or write of a whole word cell that finds nothing to report: its common
// cases done in place (the last write ordered before it; for a read, the word's reads
// ordered before it or a read set it joins at the end; for a write, every read ordered
// before it). Returns false, having changed nothing, for everything else.
inline __attribute__((always_inline)) bool PlainWord(RaceShadow* shadow, RaceCell& w,
                                                     bool write, uint64_t epoch,
                                                     const char* at, ClockView vc) {
  const uint64_t last = w.write;
  if (last == RaceShadow::kExempt || RaceShadow::IsSplit(w)) return false;
  auto ordered = [&](uint64_t e) { return e == 0 || RaceClock(e) <= vc.Get(RaceComponent(e)); };
  if (!ordered(last)) return false;
  if (!write) {
    if ((w.read & kReadSetBit) != 0) {
      const uint32_t component = RaceComponent(epoch);
      const ReadPlace place =
          PlaceRead(shadow->Set(w.read & ~kReadSetBit), component, epoch, at);
      if (place.kind == ReadPlace::kNone) return false;
      PutRead(shadow->Set(shadow->Own(&w, 1)), place, component, epoch, at);
      return true;
    }
    if (w.read != epoch && !ordered(w.read)) {  // two unordered reads: a read set
      if (RaceComponent(w.read) == RaceComponent(epoch)) return false;
      const uint64_t index = shadow->NewSet();
      std::vector<RaceShadow::Read>& reads = shadow->Set(index);
      const RaceShadow::Read first{w.read, w.read_at, 1u};
      const RaceShadow::Read second{epoch, at, 1u};
      const bool in_order = RaceComponent(first.epoch) < RaceComponent(epoch);
      reads.push_back(in_order ? first : second);
      reads.push_back(in_order ? second : first);
      w.read = kReadSetBit | index;
      return true;
    }
    w.read = epoch;
    w.read_at = at;
    return true;
  }
  if ((w.read & kReadSetBit) != 0) {
    const uint64_t index = w.read & ~kReadSetBit;
    for (const RaceShadow::Read& r : shadow->Set(index)) {
      if (r.span == 0 ? !ordered(r.epoch) : !SpanOrdered(r, vc)) return false;
    }
    shadow->Release(index);
  } else if (!ordered(w.read)) {
    return false;
  }
  w.write = epoch;
  w.write_at = at;
  w.read = 0;
  w.read_at = nullptr;
  return true;
}

// A batch's run of plain reads of whole word cells, `count` of them `step` cells apart from
// `cell` (on one page), by the thread of `epoch` at statement `at` (clock `vc`), from word
// `k` on while each word's case is a common one: its last write ordered before the read
// (`ordered_write`: a write epoch found ordered already; the thread's clock does not move
// within a batch, and a stage was mostly written at few epochs), and its reads ordered
// before it, or a read set the read extends or joins at the end, or one unordered single
// read that the read makes a read set with. Consecutive words that hold one set (or the
// same single read) make one decision, as each alone would: their set changes once, in
// place where they are all of its holders, else in a copy they then hold (a warp's lanes
// reading a row: one set for the row, extended once per lane, not once per word). Returns
// the first word left to PlainWord and the general path (having changed nothing for it),
// or `count`.
uint32_t ReadRun(RaceShadow* shadow, RaceCell* cell, uint32_t step, uint32_t k,
                 uint32_t count, uint64_t epoch, const char* at, ClockView vc,
                 uint64_t& ordered_write) {
  const uint32_t component = RaceComponent(epoch);
  auto write_ordered = [&](const RaceCell& w) {
    const uint64_t last = w.write;
    if (last == ordered_write) return true;
    if (last != 0 && RaceClock(last) > vc.Get(RaceComponent(last))) return false;
    ordered_write = last;
    return true;
  };
  while (k < count) {
    RaceCell* const w = cell + size_t{k} * step;
    if (!write_ordered(*w)) return k;
    const uint64_t read = w->read;
    // The end of the words from k that hold the same reads, their last writes ordered.
    auto segment = [&](bool single) {
      uint32_t j = k + 1;
      for (const RaceCell* c = w + step;
           j < count && c->read == read && (!single || c->read_at == w->read_at) &&
           write_ordered(*c);
           ++j, c += step) {
      }
      return j;
    };
    if ((read & kReadSetBit) != 0) {
      uint64_t index = read & ~kReadSetBit;
      const ReadPlace place = PlaceRead(shadow->Set(index), component, epoch, at);
      if (place.kind == ReadPlace::kNone) return k;
      const uint32_t j = segment(false);
      if (shadow->Holders(index) != j - k) index = shadow->Copy(index, w, 1, j - k, step);
      PutRead(shadow->Set(index), place, component, epoch, at);
      k = j;
    } else if (read == epoch || read == 0 ||
               ((read & RaceShadow::kSplitBit) == 0 &&
                RaceClock(read) <= vc.Get(RaceComponent(read)))) {
      w->read = epoch;  // replaces the reads ordered before it
      w->read_at = at;
      ++k;
    } else if ((read & RaceShadow::kSplitBit) == 0 && RaceComponent(read) != component) {
      // Two unordered reads: a read set, one for the words with the same single read.
      const uint32_t j = segment(true);
      const uint64_t index = shadow->NewSet();
      shadow->Hold(index, j - k - 1);
      std::vector<RaceShadow::Read>& set = shadow->Set(index);
      const RaceShadow::Read first{read, w->read_at, 1u};
      const RaceShadow::Read second{epoch, at, 1u};
      const bool in_order = RaceComponent(read) < component;
      set.push_back(in_order ? first : second);
      set.push_back(in_order ? second : first);
      for (RaceCell* c = w; k < j; ++k, c += step) c->read = kReadSetBit | index;
    } else {
      return k;
    }
  }
  return count;
}

}  // namespace

RaceDomain::RaceDomain(LaunchSanitizer* launch, std::vector<Block*> ctas, uint32_t threads)
    : launch_(launch),
      ctas_(std::move(ctas)),
      threads_per_cta_(threads),
      threads_(ctas_.size() * threads),
      named_(ctas_.size() * WARPTRACE_HOST_NUM_NAMED_BARRIERS) {
  components_.resize(threads_.size());
  for (uint32_t i = 0; i < threads_.size(); ++i) {
    components_[i] = {Agent::kThread, i / threads, i % threads, nullptr};
    threads_[i].vc.Raise(i, 1);
  }
}

uint32_t RaceDomain::Self(const Fiber& f) const {
  return f.block->cluster_rank() * threads_per_cta_ + f.abi.linear_tid;
}

uint32_t RaceDomain::NewComponent(Component c) {
  components_.push_back(c);
  return static_cast<uint32_t>(components_.size() - 1);
}

uint32_t RaceDomain::MmaComponent(const Fiber& f) {
  const uint32_t rank = f.block->cluster_rank();
  const uint32_t warpgroup = f.abi.linear_tid / WARPTRACE_HOST_GROUP_WARPGROUP;
  const uint64_t key = (uint64_t{rank} << 32) | warpgroup;
  auto it = mma_components_.find(key);
  if (it != mma_components_.end()) return it->second;
  const uint32_t c = NewComponent({Agent::kMma, rank, warpgroup, nullptr});
  mma_components_.emplace(key, c);
  return c;
}

uint64_t RaceDomain::EpochOf(Fiber& f, int kind) {
  Thread& t = ThreadOf(f);
  switch (kind) {
    case WARPTRACE_HOST_ACCESS_ASYNC_WRITE: {
      auto it = mbarriers_.find(f.abi.async_barrier);
      if (it == mbarriers_.end()) break;  // no barrier: the issuing thread's write
      return RaceEpoch(it->second.component, it->second.completed + 1);
    }
    case WARPTRACE_HOST_ACCESS_MMA_READ: {
      const uint64_t epoch = RaceEpoch(MmaComponent(f), t.mma_commits + 1);
      const uint32_t self = Self(f);
      mma_issues_.try_emplace(epoch, RaceEpoch(self, t.vc.Get(self)));
      return epoch;
    }
    case kCpAsyncWrite:
      if (t.cp_async < 0) {
        t.cp_async = NewComponent({Agent::kCpAsync, f.block->cluster_rank(), f.abi.linear_tid,
                                   nullptr});
      }
      return RaceEpoch(static_cast<uint32_t>(t.cp_async), t.cp_async_commits + 1);
    case WARPTRACE_HOST_ACCESS_BULK_READ:
      if (t.bulk < 0) {
        t.bulk = NewComponent({Agent::kBulk, f.block->cluster_rank(), f.abi.linear_tid,
                               nullptr});
      }
      return RaceEpoch(static_cast<uint32_t>(t.bulk), t.bulk_commits + 1);
    default:
      break;
  }
  const uint32_t self = Self(f);
  return RaceEpoch(self, t.vc.Get(self));
}

void RaceDomain::Access(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes,
                        int kind) {
  if (kind == WARPTRACE_HOST_ACCESS_ATOMIC) return;
  RaceShadow* shadow = area == RaceShadow::kGlobalArea ? &global_shadow_
                       : owner.shadow() != nullptr ? owner.shadow()->races()
                                                   : nullptr;
  if (shadow == nullptr) return;
  const uint32_t self = Self(f);
  const VectorClock& vc = threads_[self].vc;
  // Most accesses: a plain load or store (or an async delivery: a write by its agent) of
  // whole aligned words with nothing to report.
  if ((kind == WARPTRACE_HOST_ACCESS_READ || IsWrite(kind)) && ((offset | bytes) & 3) == 0 &&
      bytes <= 16) {
    const uint64_t plain_epoch = kind == WARPTRACE_HOST_ACCESS_READ ||
                                         kind == WARPTRACE_HOST_ACCESS_WRITE
                                     ? RaceEpoch(self, vc.Get(self))
                                     : EpochOf(f, kind);
    const bool plain_write = kind != WARPTRACE_HOST_ACCESS_READ;
    uint64_t word = offset;
    while (word < offset + bytes &&
           PlainWord(shadow, shadow->Word(area, word), plain_write, plain_epoch,
                     f.abi.statement, vc.View())) {
      word += 4;
    }
    if (word == offset + bytes) return;
    // Else the general path below (the words done here are done again, to the same effect).
  }
  const uint64_t epoch =
      kind == WARPTRACE_HOST_ACCESS_READ || kind == WARPTRACE_HOST_ACCESS_WRITE
          ? RaceEpoch(self, vc.Get(self))
          : EpochOf(f, kind);
  const bool write = RaceDomain::IsWrite(kind);
  const char* at = f.abi.statement;
  bool reported = false;
  auto report = [&](const Hit& hit) {
    if (reported) return;
    reported = true;
    Report(f, owner, area, offset, bytes, kind, hit);
  };
  const bool async_read =
      kind == WARPTRACE_HOST_ACCESS_MMA_READ || kind == WARPTRACE_HOST_ACCESS_BULK_READ;
  bool unfenced_reported = false;
  uint64_t ordered = 0;  // an epoch found ordered before this access (most bytes share one)
  auto is_ordered = [&](uint64_t e) {
    if (e == ordered || e == 0) return true;
    if (!Ordered(e, vc)) return false;
    ordered = e;
    return true;
  };
  // Word by word (4 aligned bytes): a word cell, or a split word's byte cells, which
  // share one read set.
  for (uint64_t byte = offset; byte < offset + bytes;) {
    const uint64_t word = byte & ~uint64_t{3};
    const uint64_t end = std::min(word + 4, offset + bytes);
    uint32_t mask = ((1u << (end - byte)) - 1u) << (byte - word);
    byte = end;
    RaceCell* w = &shadow->Word(area, word);
    uint32_t n = 4;
    if (RaceShadow::IsSplit(*w)) {
      w = shadow->Bytes(*w);
    } else if (w->write == kExempt) {
      continue;
    } else if (mask != 0xF) {
      w = shadow->Split(*w);
    } else {
      n = 1;
      mask = 1;
    }
    for (uint32_t k = 0; k < n; ++k) {
      if ((mask >> k & 1u) == 0) continue;
      if (w[k].write == kExempt) {
        mask &= ~(1u << k);
      } else if (!is_ordered(w[k].write)) {
        report({true, w[k].write, w[k].write_at});
      }
    }
    if (mask == 0) continue;
    if (async_read && !unfenced_reported) {  // the async proxy reads a generic write
      for (uint32_t k = 0; k < n; ++k) {
        const uint64_t e = w[k].write;
        if ((mask >> k & 1u) == 0 || e == 0 || RaceComponent(e) >= threads_.size() ||
            RaceClock(e) <= threads_[RaceComponent(e)].proxy_fence) {
          continue;
        }
        unfenced_reported = true;
        ReportUnfenced(f, owner, area, word + (n == 4 ? k : 0), kind,
                       {true, e, w[k].write_at});
        break;
      }
    }
    const bool set = (w[0].read & kReadSetBit) != 0;
    if (write) {
      WriteWord(shadow, w, n, mask, set, epoch, at, is_ordered, vc, report);
    } else {
      ReadWord(shadow, w, n, mask, set, epoch, at, is_ordered);
    }
  }
}

void RaceDomain::SharedBatch(Fiber& f, const WarptraceHostRaceAccess* batch, uint32_t n) {
  Block& owner = *f.block;
  RaceShadow* shadow = owner.shadow() != nullptr ? owner.shadow()->races() : nullptr;
  if (shadow == nullptr) return;
  // No synchronization between the batch's accesses: one clock for all of them.
  const uint32_t self = owner.cluster_rank() * threads_per_cta_ + f.abi.linear_tid;
  const ClockView vc = threads_[self].vc.View();
  const uint64_t epoch = RaceEpoch(self, vc.Get(self));
  uint64_t ordered_write = 0;  // ReadRun's
  // Each run's accesses in program order (the runs of one batch are the thread's accesses
  // at one clock: their verdicts do not depend on the order between runs).
  for (const WarptraceHostRaceAccess* a = batch; a != batch + n; ++a) {
    const uint32_t bytes = a->bytes;
    const int area = static_cast<int>(a->flags & WARPTRACE_HOST_RACE_DYNAMIC);
    const bool write = (a->flags & WARPTRACE_HOST_RACE_WRITE) != 0;
    const uint32_t stride = a->stride;
    const uint32_t first = a->offset;
    const uint32_t count = stride == 0 ? 1 : (a->last - first) / stride + 1;
    const uint32_t in_page = first % RaceShadow::kPageBytes;
    uint32_t k = 0;
    // Commonest: a run of single words on one page, cell after cell `stride` apart.
    if (bytes == 4 && ((first | stride) & 3u) == 0 &&
        in_page + (a->last - first) + 4 <= RaceShadow::kPageBytes) {
      RaceCell* cell = shadow->SharedPage(area, first - in_page) + in_page / 4u;
      const uint32_t step = stride / 4u;
      if (!write) {
        // The words ReadRun leaves one by one (PlainWord, else the general path), the
        // rest again by ReadRun.
        while ((k = ReadRun(shadow, cell, step, k, count, epoch, a->statement, vc,
                            ordered_write)) < count) {
          BatchWords(f, owner, *a, first + k * stride, epoch, vc);
          ++k;
        }
      } else {
        for (; k < count && PlainWord(shadow, *cell, true, epoch, a->statement, vc); ++k) {
          cell += step;
        }
      }
    }
    for (; k < count; ++k) BatchWords(f, owner, *a, first + k * stride, epoch, vc);
  }
}

void RaceDomain::BatchWords(Fiber& f, Block& owner, const WarptraceHostRaceAccess& a,
                            uint32_t offset, uint64_t epoch, ClockView vc) {
  RaceShadow* shadow = owner.shadow()->races();
  const uint32_t in_page = offset % RaceShadow::kPageBytes;
  if (((offset | a.bytes) & 3u) == 0 && in_page + a.bytes <= RaceShadow::kPageBytes) {
    RaceCell* cell = shadow->SharedPage(a.flags & WARPTRACE_HOST_RACE_DYNAMIC, offset - in_page) +
                     in_page / 4u;
    RaceCell* const end = cell + a.bytes / 4u;
    const bool write = (a.flags & WARPTRACE_HOST_RACE_WRITE) != 0;
    while (cell != end && PlainWord(shadow, *cell, write, epoch, a.statement, vc)) ++cell;
    if (cell == end) return;
  }
  BatchAccess(f, owner, a, offset);
}

void RaceDomain::BatchAccess(Fiber& f, Block& owner, const WarptraceHostRaceAccess& a,
                             uint32_t offset) {
  // The general path (the words the fast path did are done again, to the same effect).
  const char* const statement = f.abi.statement;
  f.abi.statement = a.statement;  // what a report names
  Access(f, owner, (a.flags & WARPTRACE_HOST_RACE_DYNAMIC) != 0 ? 1 : 0, offset, a.bytes,
         (a.flags & WARPTRACE_HOST_RACE_WRITE) != 0 ? WARPTRACE_HOST_ACCESS_WRITE
                                                    : WARPTRACE_HOST_ACCESS_READ);
  f.abi.statement = statement;
}

void FlushRaceBatch(Fiber& f) {
  const uint32_t n = f.abi.race_pending;
  f.abi.race_pending = 0;
  if (RaceDomain* races = f.block->races(); races != nullptr && n != 0) {
    races->SharedBatch(f, f.abi.race_batch, n);
  }
}

void RaceDomain::GlobalAccess(Fiber& f, uintptr_t address, uint64_t bytes, int kind) {
  if (kind == WARPTRACE_HOST_ACCESS_ATOMIC) {
    ++sync_ops_;
    return;
  }
  Access(f, *f.block, RaceShadow::kGlobalArea, address, bytes, kind);
  const bool write = IsWrite(kind);
  if (!global_log_.empty()) {  // extends the last run: a thread's, or a warp's, next bytes
    GlobalRun& last = global_log_.back();
    if (last.end == address && last.write == write && last.at == f.abi.statement &&
        global_seq_.back() == sync_ops_) {
      last.end = address + bytes;
      return;
    }
  }
  GlobalRun& run = global_log_.emplace_back();
  run.start = address;
  run.end = address + bytes;
  run.write = write;
  run.acquired = sync_ops_ > 0;
  run.at = f.abi.statement;
  run.domain = ctas_.front()->linear();
  run.block = f.block->linear();
  run.thread = f.abi.linear_tid;
  global_seq_.push_back(sync_ops_);
}

void RaceDomain::Finish() {
  if (finished_) return;
  finished_ = true;
  if (global_log_.empty()) return;
  for (size_t i = 0; i < global_log_.size(); ++i) {
    global_log_[i].released = global_seq_[i] < sync_ops_;
  }
  std::vector<GlobalRun> runs = CoalesceGlobalRuns(std::move(global_log_));
  for (GlobalRun& run : runs) {  // named once coalesced: a block has few runs
    const auto cta = std::find_if(ctas_.begin(), ctas_.end(),
                                  [&](const Block* b) { return b->linear() == run.block; });
    run.who = ThreadName(static_cast<uint32_t>(cta - ctas_.begin()), run.thread);
  }
  launch_->global_races().Add(std::move(runs));
  global_log_.clear();
  global_seq_.clear();
}

void RaceDomain::Event(Fiber& f, int event, uint64_t n) {
  Thread& t = ThreadOf(f);
  switch (event) {
    case WARPTRACE_HOST_EVENT_FENCE:
      ++sync_ops_;
      break;
    case WARPTRACE_HOST_EVENT_MMA_COMMIT:
      ++t.mma_commits;
      break;
    case WARPTRACE_HOST_EVENT_MMA_WAIT:
      if (t.mma_commits > n) {
        t.RaiseOther(MmaComponent(f), t.mma_commits - static_cast<uint32_t>(n));
      }
      break;
    case WARPTRACE_HOST_EVENT_BULK_COMMIT:
      ++t.bulk_commits;
      break;
    case WARPTRACE_HOST_EVENT_BULK_WAIT:
      if (t.bulk >= 0 && t.bulk_commits > n) {
        t.RaiseOther(static_cast<uint32_t>(t.bulk), t.bulk_commits - static_cast<uint32_t>(n));
      }
      break;
    case WARPTRACE_HOST_EVENT_PROXY_FENCE: {  // its writes so far; later ones get a new clock
      const uint32_t self = Self(f);
      t.proxy_fence = t.vc.Get(self);
      t.vc.Tick(self);
      break;
    }
    default:
      break;
  }
}

void RaceDomain::BarrierArrive(Fiber& f, uint32_t id) {
  NamedBarrier& b = named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  Thread& t = ThreadOf(f);
  const uint32_t self = Self(f);
  // A thread whose clock is a barrier's snapshot but for its own component adds only that
  // component once the snapshot is in (n threads cost n, not n^2, between plain barriers).
  if (t.base != 0 && t.base == b.acc_base) {
    b.acc.Raise(self, t.vc.Get(self));
  } else {
    b.acc.Join(t.vc);
    if (b.acc_base == 0) b.acc_base = t.base;  // the snapshot is in `acc` now
  }
  t.barrier_gen[id] = b.gen;
  t.vc.Tick(self);
}

void RaceDomain::BarrierDone(Fiber& f, uint32_t id, bool completed) {
  if (!completed) return;
  NamedBarrier& b = named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  b.done[b.gen & 1] = std::move(b.acc);
  b.done_id[b.gen & 1] = ++snapshots_;
  b.acc.Clear();
  b.acc_base = 0;
  ++b.gen;
}

void RaceDomain::BarrierPassed(Fiber& f, uint32_t id) {
  const NamedBarrier& b =
      named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  Thread& t = ThreadOf(f);
  // Parked since its arrival, the thread's clock is what it joined into the barrier plus
  // its own tick: the join is the barrier's clock with its own component.
  const uint32_t self = Self(f);
  const uint32_t own = t.vc.Get(self);
  const uint32_t parity = t.barrier_gen[id] & 1;
  t.vc = b.done[parity];
  t.vc.Raise(self, own);
  t.base = b.done_id[parity];
}

void RaceDomain::WarpSync(Fiber* const* lanes, uint32_t count) {
  VectorClock all;
  for (uint32_t i = 0; i < count; ++i) all.Join(ThreadOf(*lanes[i]).vc);
  for (uint32_t i = 0; i < count; ++i) {
    Thread& t = ThreadOf(*lanes[i]);
    t.Acquire(all);
    t.vc.Tick(Self(*lanes[i]));
  }
}

void RaceDomain::MbarrierInit(const void* bar, Block& owner) {
  auto [it, added] = mbarriers_.try_emplace(bar);
  Mbarrier& m = it->second;
  if (added) {
    m.component = NewComponent({Agent::kMbarrier, owner.cluster_rank(), 0, bar});
  }
  const uint32_t component = m.component;
  m = Mbarrier{};
  m.component = component;
  m.rank = owner.cluster_rank();
}

void RaceDomain::MbarrierArrived(Fiber& f, const void* bar, bool completed) {
  auto it = mbarriers_.find(bar);
  if (it == mbarriers_.end()) return;
  Mbarrier& m = it->second;
  Thread& t = ThreadOf(f);
  m.acc.Join(t.vc);
  t.vc.Tick(Self(f));
  if (!completed) return;
  ++m.completed;
  m.acc.Raise(m.component, static_cast<uint32_t>(m.completed));
  m.done[m.completed % 4] = m.acc;
}

void RaceDomain::MbarrierObserved(Fiber& f, const void* bar) {
  auto it = mbarriers_.find(bar);
  if (it == mbarriers_.end() || it->second.completed == 0) return;
  ThreadOf(f).Acquire(it->second.done[it->second.completed % 4]);
}

void RaceDomain::ClusterArrive(Fiber& f, uint64_t phase) {
  Thread& t = ThreadOf(f);
  cluster_acc_.Join(t.vc);
  t.cluster_phase = phase;
  t.vc.Tick(Self(f));
}

void RaceDomain::ClusterDone(uint64_t phase) {
  if (phase == cluster_phase_) return;
  cluster_done_[cluster_phase_ & 1] = std::move(cluster_acc_);
  cluster_acc_.Clear();
  cluster_phase_ = phase;
}

void RaceDomain::ClusterPassed(Fiber& f, uint64_t phase) {
  ClusterDone(phase);  // a phase that threads exiting completed
  Thread& t = ThreadOf(f);
  t.Acquire(cluster_done_[t.cluster_phase & 1]);
}

void RaceDomain::CpAsyncIssue(Fiber& f, Block& owner, int area, uint64_t offset,
                              uint64_t bytes) {
  Access(f, owner, area, offset, bytes, kCpAsyncWrite);
}

void RaceDomain::CpAsyncCommit(Fiber& f) { ++ThreadOf(f).cp_async_commits; }

void RaceDomain::CpAsyncWait(Fiber& f, uint32_t n) {
  Thread& t = ThreadOf(f);
  if (t.cp_async >= 0 && t.cp_async_commits > n) {
    t.RaiseOther(static_cast<uint32_t>(t.cp_async), t.cp_async_commits - n);
  }
}

}  // namespace warptrace::host
