#include "jit/host/runtime/races.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/sanitizer.h"

namespace warptrace::host {
namespace {

constexpr int kClockBits = 40;
constexpr uint64_t kClockMask = (uint64_t{1} << kClockBits) - 1;
constexpr uint64_t kExempt = ~uint64_t{0};
constexpr uint64_t kReadSet = ~uint64_t{0} - 1;

uint64_t Epoch(uint32_t component, uint64_t clock) {
  return (static_cast<uint64_t>(component) << kClockBits) | (clock & kClockMask);
}
uint32_t ComponentOf(uint64_t epoch) { return static_cast<uint32_t>(epoch >> kClockBits); }
uint32_t ClockOf(uint64_t epoch) { return static_cast<uint32_t>(epoch & kClockMask); }

bool IsWrite(int kind) {
  return kind == WARPTRACE_HOST_ACCESS_WRITE || kind == WARPTRACE_HOST_ACCESS_ASYNC_WRITE ||
         kind == RaceDomain::kCpAsyncWrite;
}

}  // namespace

void VectorClock::Join(const VectorClock& o) {
  if (o.v_.size() > v_.size()) v_.resize(o.v_.size(), 0u);
  for (size_t i = 0; i < o.v_.size(); ++i) v_[i] = std::max(v_[i], o.v_[i]);
}

RaceShadow::RaceShadow(uint64_t dynamic_bytes) {
  pages_[0].resize((WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES + kPageCells - 1) / kPageCells);
  pages_[1].resize((dynamic_bytes + kPageCells - 1) / kPageCells);
}

RaceCell& RaceShadow::Cell(int area, uint64_t offset) {
  std::unique_ptr<RaceCell[]>& page = pages_[area][offset / kPageCells];
  if (page == nullptr) page = std::make_unique<RaceCell[]>(kPageCells);
  return page[offset % kPageCells];
}

void RaceShadow::Exempt(int area, uint64_t offset, uint64_t bytes) {
  for (uint64_t i = 0; i < bytes; ++i) {
    if ((offset + i) / kPageCells >= pages_[area].size()) return;
    Cell(area, offset + i).write = kExempt;
  }
}

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
      return Epoch(it->second.component, it->second.completed + 1);
    }
    case WARPTRACE_HOST_ACCESS_MMA_READ: {
      const uint64_t epoch = Epoch(MmaComponent(f), t.mma_commits + 1);
      const uint32_t self = Self(f);
      mma_issues_.try_emplace(epoch, Epoch(self, t.vc.Get(self)));
      return epoch;
    }
    case kCpAsyncWrite:
      if (t.cp_async < 0) {
        t.cp_async = NewComponent({Agent::kCpAsync, f.block->cluster_rank(), f.abi.linear_tid,
                                   nullptr});
      }
      return Epoch(static_cast<uint32_t>(t.cp_async), t.cp_async_commits + 1);
    case WARPTRACE_HOST_ACCESS_BULK_READ:
      if (t.bulk < 0) {
        t.bulk = NewComponent({Agent::kBulk, f.block->cluster_rank(), f.abi.linear_tid,
                               nullptr});
      }
      return Epoch(static_cast<uint32_t>(t.bulk), t.bulk_commits + 1);
    default:
      break;
  }
  const uint32_t self = Self(f);
  return Epoch(self, t.vc.Get(self));
}

bool RaceDomain::Ordered(uint64_t epoch, const VectorClock& vc) const {
  return ClockOf(epoch) <= vc.Get(ComponentOf(epoch));
}

void RaceDomain::Access(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes,
                        int kind) {
  if (kind == WARPTRACE_HOST_ACCESS_ATOMIC || owner.shadow() == nullptr) return;
  RaceShadow* shadow = owner.shadow()->races();
  if (shadow == nullptr) return;
  const uint64_t epoch = EpochOf(f, kind);
  const VectorClock& vc = ThreadOf(f).vc;
  const bool write = IsWrite(kind);
  const char* at = f.abi.statement;
  bool reported = false;
  auto report = [&](const Hit& hit) {
    if (reported) return;
    reported = true;
    Report(f, owner, area, offset, bytes, kind, hit);
  };
  for (uint64_t i = 0; i < bytes; ++i) {
    RaceCell& c = shadow->Cell(area, offset + i);
    if (c.write == kExempt) continue;
    if (c.write != 0 && !Ordered(c.write, vc)) report({true, c.write, c.write_at});
    if (write) {
      if (c.read == kReadSet) {
        for (const RaceShadow::Read& r : shadow->ReadSet(area, offset + i)) {
          if (!Ordered(r.epoch, vc)) report({false, r.epoch, r.at});
        }
        shadow->DropReadSet(area, offset + i);
      } else if (c.read != 0 && !Ordered(c.read, vc)) {
        report({false, c.read, c.read_at});
      }
      c = {epoch, 0, at, nullptr};
      continue;
    }
    if (c.read == epoch) continue;
    if (c.read == 0 || (c.read != kReadSet && Ordered(c.read, vc))) {
      c.read = epoch;  // the earlier read is ordered before this one: this one covers it
      c.read_at = at;
      continue;
    }
    std::vector<RaceShadow::Read>& set = shadow->ReadSet(area, offset + i);
    if (c.read != kReadSet) set = {{c.read, c.read_at}};
    set.erase(std::remove_if(set.begin(), set.end(),
                             [&](const RaceShadow::Read& r) { return Ordered(r.epoch, vc); }),
              set.end());
    set.push_back({epoch, at});
    c.read = kReadSet;
  }
}

void RaceDomain::Event(Fiber& f, int event, uint64_t n) {
  Thread& t = ThreadOf(f);
  switch (event) {
    case WARPTRACE_HOST_EVENT_MMA_COMMIT:
      ++t.mma_commits;
      break;
    case WARPTRACE_HOST_EVENT_MMA_WAIT:
      if (t.mma_commits > n) t.vc.Raise(MmaComponent(f), t.mma_commits - static_cast<uint32_t>(n));
      break;
    case WARPTRACE_HOST_EVENT_BULK_COMMIT:
      ++t.bulk_commits;
      break;
    case WARPTRACE_HOST_EVENT_BULK_WAIT:
      if (t.bulk >= 0 && t.bulk_commits > n) {
        t.vc.Raise(static_cast<uint32_t>(t.bulk), t.bulk_commits - static_cast<uint32_t>(n));
      }
      break;
    default:
      break;
  }
}

void RaceDomain::BarrierArrive(Fiber& f, uint32_t id) {
  NamedBarrier& b = named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  Thread& t = ThreadOf(f);
  b.acc.Join(t.vc);
  t.barrier_gen[id] = b.gen;
  t.vc.Tick(Self(f));
}

void RaceDomain::BarrierDone(Fiber& f, uint32_t id, bool completed) {
  if (!completed) return;
  NamedBarrier& b = named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  b.done[b.gen & 1] = std::move(b.acc);
  b.acc.Clear();
  ++b.gen;
}

void RaceDomain::BarrierPassed(Fiber& f, uint32_t id) {
  const NamedBarrier& b =
      named_[f.block->cluster_rank() * WARPTRACE_HOST_NUM_NAMED_BARRIERS + id];
  Thread& t = ThreadOf(f);
  t.vc.Join(b.done[t.barrier_gen[id] & 1]);
}

void RaceDomain::WarpSync(Fiber* const* lanes, uint32_t count) {
  VectorClock all;
  for (uint32_t i = 0; i < count; ++i) all.Join(ThreadOf(*lanes[i]).vc);
  for (uint32_t i = 0; i < count; ++i) {
    Thread& t = ThreadOf(*lanes[i]);
    t.vc.Join(all);
    t.vc.Tick(Self(*lanes[i]));
  }
}

void RaceDomain::MbarrierInit(const void* bar, Block& owner, int area, uint64_t offset) {
  auto [it, added] = mbarriers_.try_emplace(bar);
  Mbarrier& m = it->second;
  if (added) {
    m.component = NewComponent({Agent::kMbarrier, owner.cluster_rank(), 0, bar});
  }
  const uint32_t component = m.component;
  m = Mbarrier{};
  m.component = component;
  m.rank = owner.cluster_rank();
  if (owner.shadow() != nullptr && owner.shadow()->races() != nullptr) {
    owner.shadow()->races()->Exempt(area, offset, 8);
  }
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
  ThreadOf(f).vc.Join(it->second.done[it->second.completed % 4]);
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
  t.vc.Join(cluster_done_[t.cluster_phase & 1]);
}

void RaceDomain::CpAsyncIssue(Fiber& f, Block& owner, int area, uint64_t offset,
                              uint64_t bytes) {
  Access(f, owner, area, offset, bytes, kCpAsyncWrite);
}

void RaceDomain::CpAsyncCommit(Fiber& f) { ++ThreadOf(f).cp_async_commits; }

void RaceDomain::CpAsyncWait(Fiber& f, uint32_t n) {
  Thread& t = ThreadOf(f);
  if (t.cp_async >= 0 && t.cp_async_commits > n) {
    t.vc.Raise(static_cast<uint32_t>(t.cp_async), t.cp_async_commits - n);
  }
}

}  // namespace warptrace::host
