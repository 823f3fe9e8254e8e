// The sanitizer's races check (WARPTRACE_HOST_SANITIZE_RACES): a happens-before model over
// everything the host backend executes, and a shadow of every shared-memory byte's last
// write and the reads since, so that two accesses of the same byte, at least one a write,
// that nothing orders are reported with both accesses' threads and builder statements and
// the ordering that was missing.
//
//   RaceDomain  one per cluster (one per block without clusters): a vector clock per thread
//               and per synchronization object (block and named barriers, mbarriers, the
//               cluster barrier), and the async agents' components.
//   RaceShadow  one per block: the shadow cells of its static and dynamic shared memory.
//
// Components of a vector clock: one per thread of the domain (CTA rank x threads per CTA +
// linear thread id), then, as they are first used, one per mbarrier (a TMA load's delivery
// is that barrier's phase: it becomes visible to the threads that observe the phase it
// completes on), one per warpgroup for its wgmma groups (a wgmma's shared-memory operand
// reads last until the wgmma.wait_group that retires its group), one per thread for its
// cp.async groups (visible after the cp.async.wait_group that covers the group) and one per
// thread for its bulk (TMA) store groups (reading until cp.async.bulk.wait_group.read).
//
// Edges: a barrier (bar.sync, __syncthreads, __syncwarp, barrier.cluster) orders every
// arrival before every participant's continuation; bar.arrive and mbarrier arrivals
// (local or remote) release the arriving thread's clock into the barrier; a wait that
// observes an mbarrier phase acquires every arrival of that phase and the phases before it.
// Atomics are never counted against each other or against plain accesses, and mbarrier
// words and warptrace's own arrays (warptrace_*) are not checked.
//
// Determinism: the fibers of a block (and of a cluster) run in an order fixed by the
// kernel (the ready queue is first in, first out; virtual time does not reorder it), so a
// report is the same every run; each finding is kept once per (statement pair).
//
// Internal to the runtime; touched only by the worker thread that runs the domain's CTAs.
#ifndef WARPTRACE_JIT_HOST_RUNTIME_RACES_H_
#define WARPTRACE_JIT_HOST_RUNTIME_RACES_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/global_races.h"

namespace warptrace::host {

class Block;
class LaunchSanitizer;
struct Fiber;

// An access's epoch: the component (thread or async agent) that made it and that
// component's clock then.
inline constexpr int kRaceClockBits = 40;
inline uint64_t RaceEpoch(uint32_t component, uint64_t clock) {
  return (static_cast<uint64_t>(component) << kRaceClockBits) |
         (clock & ((uint64_t{1} << kRaceClockBits) - 1));
}
inline uint32_t RaceComponent(uint64_t epoch) {
  return static_cast<uint32_t>(epoch >> kRaceClockBits);
}
inline uint32_t RaceClock(uint64_t epoch) {
  return static_cast<uint32_t>(epoch & ((uint64_t{1} << kRaceClockBits) - 1));
}

// A vector clock's components, read-only, as locals the compiler keeps in registers (a
// batch of accesses checks against one clock).
struct ClockView {
  const uint32_t* v;
  uint32_t n;
  uint32_t Get(uint32_t c) const { return c < n ? v[c] : 0u; }
  // Whether components first + k * stride, k < count, are all at least `x`.
  bool AllAtLeast(uint32_t first, uint32_t count, uint32_t stride, uint32_t x) const {
    if (x == 0) return true;
    if (first + (count - 1) * stride >= n) return false;
    uint32_t low = ~0u;
    if (stride == 1) {
      for (uint32_t i = 0; i < count; ++i) low = v[first + i] < low ? v[first + i] : low;
    } else {
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t c = v[first + i * stride];
        low = c < low ? c : low;
      }
    }
    return low >= x;
  }
};

class VectorClock {
 public:
  ClockView View() const { return {v_.data(), static_cast<uint32_t>(v_.size())}; }
  uint32_t Get(uint32_t c) const { return c < v_.size() ? v_[c] : 0u; }
  void Raise(uint32_t c, uint32_t x) {
    if (c >= v_.size()) v_.resize(c + 1, 0u);
    if (v_[c] < x) v_[c] = x;
  }
  void Tick(uint32_t c) { Raise(c, Get(c) + 1); }
  void Join(const VectorClock& o);
  void Clear() { v_.clear(); }

 private:
  std::vector<uint32_t> v_;
};

// A word (4 aligned bytes) of shared memory, or one byte of a split word: its last write
// and the reads since (epochs: component << 40 | clock; 0: none), with the statements that
// made them. A word stays one cell while every access covers all of it; a narrower access
// splits it into four byte cells (RaceShadow::Split), for good.
struct RaceCell {
  uint64_t write = 0;
  uint64_t read = 0;  // kReadSetBit | a read set's index; in a word cell, kSplitBit | index
  const char* write_at = nullptr;
  const char* read_at = nullptr;
};

class RaceShadow {
 public:
  static constexpr uint64_t kExempt = ~uint64_t{0};
  static constexpr uint64_t kReadSetBit = uint64_t{1} << 63;  // components < 2^22
  static constexpr uint64_t kSplitBit = uint64_t{1} << 62;

  // The cells of the static area (48 KiB) and of the dynamic area (`dynamic_bytes`).
  explicit RaceShadow(uint64_t dynamic_bytes);
  // Hands its read sets' storage to the worker thread's spares (NewSet).
  ~RaceShadow();
  RaceShadow(const RaceShadow&) = delete;
  RaceShadow& operator=(const RaceShadow&) = delete;
  // The cell of the word at byte `offset` (a multiple of 4) of area 0 (static) or 1
  // (dynamic), or at global address `offset` (kGlobalArea), created on first use.
  static constexpr int kGlobalArea = 2;
  RaceCell& Word(int area, uint64_t offset) {
    if (area == kGlobalArea) return GlobalWord(offset);
    return SharedPage(area, offset - offset % kPageBytes)[offset % kPageBytes / 4];
  }
  // Shared memory's cells come in pages of this many bytes' words.
  static constexpr uint32_t kPageBytes = 16384;
  // The cells of the page at byte `offset` (a multiple of kPageBytes) of shared area 0 or 1.
  RaceCell* SharedPage(int area, uint64_t offset) {
    std::unique_ptr<RaceCell[]>& page = pages_[area][offset / kPageBytes];
    if (page == nullptr) page = std::make_unique<RaceCell[]>(kPageBytes / 4);
    return page.get();
  }
  static bool IsSplit(const RaceCell& word) {
    return (word.read & (kReadSetBit | kSplitBit)) == kSplitBit;
  }
  // The four byte cells of a split word.
  RaceCell* Bytes(const RaceCell& word) { return split_[word.read & ~kSplitBit].data(); }
  // Splits `word` (not split yet) into four byte cells with its state; returns them.
  RaceCell* Split(RaceCell& word);
  // The bytes are never checked (an mbarrier word, warptrace's own arrays).
  void Exempt(int area, uint64_t offset, uint64_t bytes);
  // Reads of the same bytes by the components RaceComponent(epoch) + k * `stride`,
  // k = 0 .. `span`, all at the clock RaceClock(epoch) and statement `at`: the lanes of a
  // warp reading one word (stride 1), or one lane of each of a block's warps (stride 32),
  // kept as one entry.
  struct Read {
    uint64_t epoch;
    const char* at;
    uint32_t mask;          // the bytes of the word it read (bit k: byte k; a word cell's: 1)
    uint16_t stride = 1;
    uint16_t span = 0;      // the components after the first (0: one component)
    // The epoch of the read that continues the entry (the next component's at the same
    // clock), once its stride is known; 0: none (one component yet, a mask other than a
    // whole word's, a full span). The batch's reads extend an entry with two compares.
    uint64_t next = 0;
    uint32_t First() const { return RaceComponent(epoch); }
    uint32_t Last() const { return First() + uint32_t{span} * stride; }
    uint64_t Epoch(uint32_t k) const {
      return epoch + (uint64_t{k * uint32_t{stride}} << kRaceClockBits);
    }
    // Whether a whole-word read by `component` (past Last()) at `read_epoch` and `read_at`
    // continues the entry's components (Extend takes it in).
    bool Extends(uint32_t component, uint64_t read_epoch, const char* read_at) const {
      if (RaceClock(epoch) != RaceClock(read_epoch) || at != read_at || mask != 1u ||
          span == 0xffff) {
        return false;
      }
      if (span == 0) return component > First() && component - First() <= 0xffff;
      return component == Last() + stride;
    }
    bool Extend(uint32_t component, uint64_t read_epoch, const char* read_at) {
      if (!Extends(component, read_epoch, read_at)) return false;
      if (span == 0) stride = static_cast<uint16_t>(component - First());
      ++span;
      next = span == 0xffff ? 0 : read_epoch + (uint64_t{stride} << kRaceClockBits);
      return true;
    }
  };
  // Replaces each read of several components by one read per component.
  static void Unfold(std::vector<Read>& reads);
  // The read set of a word with several unordered reads: its cell's `read` (each of its
  // byte cells' when split) holds kReadSetBit | the set's index. Words with equal reads may
  // hold one set (a batch's run of whole-word reads, RaceDomain::SharedBatch: a warp's
  // lanes reading a row extend one set, not one per word): `Holders` counts the words (a
  // split word's four byte cells are one) that hold it; a change of one word's reads
  // takes its own copy first (Own).
  std::vector<Read>& Set(uint64_t index) { return sets_[index]; }
  // A new empty set held by one word.
  uint64_t NewSet() {
    if (!free_.empty()) {
      const uint64_t index = free_.back();
      free_.pop_back();
      holders_[index] = 1;
      return index;
    }
    return AddSet();
  }
  uint32_t Holders(uint64_t index) const { return holders_[index]; }
  void Hold(uint64_t index, uint32_t words) { holders_[index] += words; }
  // `words` words no longer hold the set; the last one frees it.
  void Release(uint64_t index, uint32_t words = 1) {
    holders_[index] -= words;
    if (holders_[index] == 0) {
      sets_[index].clear();
      free_.push_back(index);
    }
  }
  // The set of the word whose `n` cells (1: a word cell; 4: a split word's bytes) are `w`,
  // that word's alone: where other words hold it too, a copy the word now holds instead.
  uint64_t Own(RaceCell* w, uint32_t n) {
    const uint64_t index = w[0].read & ~kReadSetBit;
    return holders_[index] == 1 ? index : Copy(index, w, n, 1, 1);
  }
  // Gives the `words` words whose cells are `w`, `w + step`, ... (each `n` cells) a copy of
  // set `index`, which they held; returns the copy's index.
  uint64_t Copy(uint64_t index, RaceCell* w, uint32_t n, uint32_t words, uint32_t step);

 private:
  std::vector<std::unique_ptr<RaceCell[]>> pages_[2];
  // Global memory (a domain's own shadow): pages of kGlobalPageBytes by address, the last
  // one used at hand (a thread's accesses mostly stay on a page).
  static constexpr uint64_t kGlobalPageBytes = 1024;
  RaceCell& GlobalWord(uint64_t address) {
    const uint64_t page = address / kGlobalPageBytes;
    if (page != last_global_page_ || last_global_cells_ == nullptr) {
      std::unique_ptr<RaceCell[]>& cells = global_[page];
      if (cells == nullptr) cells = std::make_unique<RaceCell[]>(kGlobalPageBytes / 4);
      last_global_page_ = page;
      last_global_cells_ = cells.get();
    }
    return last_global_cells_[address % kGlobalPageBytes / 4];
  }
  std::unordered_map<uint64_t, std::unique_ptr<RaceCell[]>> global_;
  uint64_t last_global_page_ = 0;
  RaceCell* last_global_cells_ = nullptr;
  // A new set: a spare of a block this worker thread checked before (a block's sets were
  // allocated and freed at every launch: 8% of the pipeline's sanitized launch), else new.
  uint64_t AddSet();
  std::vector<std::array<RaceCell, 4>> split_;
  std::vector<std::vector<Read>> sets_;
  std::vector<uint32_t> holders_;  // by set
  std::vector<uint64_t> free_;
};

class RaceDomain {
 public:
  // Access kind (beside WARPTRACE_HOST_ACCESS_*): a cp.async's delivery, recorded at issue.
  static constexpr int kCpAsyncWrite = 100;
  // Whether an access of `kind` writes (a plain write, a TMA or cp.async delivery).
  static bool IsWrite(int kind) {
    return kind == WARPTRACE_HOST_ACCESS_WRITE || kind == WARPTRACE_HOST_ACCESS_ASYNC_WRITE ||
           kind == kCpAsyncWrite;
  }

  // A domain of `ctas` CTAs (their blocks, by rank) of `threads` threads each.
  RaceDomain(LaunchSanitizer* launch, std::vector<Block*> ctas, uint32_t threads);

  // ---- Accesses ----
  // `f`'s access of `bytes` at byte `offset` of area `area` (0 static, 1 dynamic) of the
  // shared memory of CTA `owner`, of WARPTRACE_HOST_ACCESS_* `kind`; with area
  // RaceShadow::kGlobalArea, at global address `offset` (GlobalAccess).
  void Access(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes, int kind);
  // `f`'s batched plain accesses of its own CTA's shared memory (host_abi.h race_batch):
  // runs of accesses, each run's in program order.
  void SharedBatch(Fiber& f, const WarptraceHostRaceAccess* batch, uint32_t n);
  // The access at `offset` of batch entry `a` (of `f`'s clock `vc` and `epoch`) that
  // SharedBatch's loop left: whole words on one page in place (PlainWord), else
  // BatchAccess.
  void BatchWords(Fiber& f, Block& owner, const WarptraceHostRaceAccess& a, uint32_t offset,
                  uint64_t epoch, ClockView vc);
  // The access at `offset` of batch entry `a` that the fast paths left: Access, naming
  // the entry's statement.
  __attribute__((noinline)) void BatchAccess(Fiber& f, Block& owner,
                                             const WarptraceHostRaceAccess& a,
                                             uint32_t offset);
  // `f`'s access of `bytes` at `address` of a buffer the races check follows: checked
  // against the domain's other threads as shared memory is, and logged for the check
  // between blocks (global_races.h). A global atomic is a fence-and-atomic protocol's step.
  void GlobalAccess(Fiber& f, uintptr_t address, uint64_t bytes, int kind);
  // The domain's blocks finished: its global accesses go to the launch's log.
  void Finish();
  // An async-group event (WARPTRACE_HOST_EVENT_*) of `f` with argument `n`.
  void Event(Fiber& f, int event, uint64_t n);

  // ---- Synchronization ----
  // bar.sync / bar.arrive on barrier `id` of `f`'s CTA, before the block's barrier runs;
  // after it, BarrierDone (completed: that call completed the phase); after the wait,
  // BarrierPassed.
  void BarrierArrive(Fiber& f, uint32_t id);
  void BarrierDone(Fiber& f, uint32_t id, bool completed);
  void BarrierPassed(Fiber& f, uint32_t id);
  // A warp collective that orders memory (__syncwarp) completed with these lanes.
  void WarpSync(Fiber* const* lanes, uint32_t count);
  // mbarrier.init of `bar` (in CTA `owner`'s shared memory; BlockShadow::Unchecked exempts
  // its word).
  void MbarrierInit(const void* bar, Block& owner);
  // `f` arrived on (or completed transactions of) `bar`; `completed`: the phase completed.
  void MbarrierArrived(Fiber& f, const void* bar, bool completed);
  // `f`'s wait on `bar` returned having observed its latest completed phase.
  void MbarrierObserved(Fiber& f, const void* bar);
  // barrier.cluster: `phase` the cluster barrier's phase at the arrival; Done after the
  // call (the barrier's phase now); Passed after the wait for the phase of `f`'s arrival.
  void ClusterArrive(Fiber& f, uint64_t phase);
  void ClusterDone(uint64_t phase);
  void ClusterPassed(Fiber& f, uint64_t phase);
  // cp.async: an issue (checked and marked now, visible after its group's wait), a commit,
  // a wait_group `n`.
  void CpAsyncIssue(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes);
  void CpAsyncCommit(Fiber& f);
  void CpAsyncWait(Fiber& f, uint32_t n);

 private:
  struct Thread {
    VectorClock vc;
    int64_t cp_async = -1;  // its cp.async component (-1: none yet)
    uint32_t cp_async_commits = 0;
    int64_t bulk = -1;  // its bulk store component
    uint32_t bulk_commits = 0;
    uint32_t mma_commits = 0;
    uint32_t proxy_fence = 0;  // its clock at its last fence.proxy.async (its writes up to it)
    uint64_t barrier_gen[16] = {};  // the generation of each named barrier it arrived at
    uint64_t cluster_phase = 0;
    // Nonzero: `vc` is the barrier snapshot of this id but for the thread's own component.
    uint64_t base = 0;
    void Acquire(const VectorClock& o) {
      vc.Join(o);
      base = 0;
    }
    void RaiseOther(uint32_t c, uint32_t x) {
      vc.Raise(c, x);
      base = 0;
    }
  };
  struct NamedBarrier {
    VectorClock acc;
    uint64_t acc_base = 0;  // the snapshot joined into `acc` whole (0: none)
    uint64_t gen = 0;
    VectorClock done[2];  // by generation parity
    uint64_t done_id[2] = {};  // their snapshot ids
  };
  enum class Agent : uint8_t { kThread, kMbarrier, kMma, kCpAsync, kBulk };
  struct Component {
    Agent agent = Agent::kThread;
    uint32_t rank = 0;
    uint32_t index = 0;  // thread id (kThread, kCpAsync, kBulk), warpgroup (kMma)
    const void* bar = nullptr;  // kMbarrier
  };
  struct Mbarrier {
    uint32_t component = 0;
    uint64_t completed = 0;
    VectorClock acc;
    VectorClock done[4];  // by completed phase % 4
    uint32_t rank = 0;    // its CTA
  };
  struct Hit {  // a conflicting earlier access
    bool write = false;
    uint64_t epoch = 0;
    const char* at = nullptr;
  };

  uint32_t Self(const Fiber& f) const;
  Thread& ThreadOf(const Fiber& f) { return threads_[Self(f)]; }
  uint32_t NewComponent(Component c);
  uint32_t MmaComponent(const Fiber& f);
  // The epoch `f`'s access of `kind` is recorded with.
  uint64_t EpochOf(Fiber& f, int kind);
  // The access of `epoch` happens before a thread whose clock is
  // `vc`.
  static bool Ordered(uint64_t epoch, const VectorClock& vc) {
    return RaceClock(epoch) <= vc.Get(RaceComponent(epoch));
  }
  void Report(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes, int kind,
              const Hit& hit);
  // An async-proxy read (`kind`) of a thread's generic write `hit` that the writer did not
  // fence (fence.proxy.async) before.
  void ReportUnfenced(Fiber& f, Block& owner, int area, uint64_t offset, int kind,
                      const Hit& hit);
  std::string DescribeEarlier(const Hit& hit) const;
  std::string Missing(const Hit& hit, const VectorClock& later) const;
  std::string MissingRetire(const Hit& hit, const VectorClock& later) const;
  // The earliest completed phase of an mbarrier whose release holds `epoch` (a thread's or a
  // wgmma group's retirement), and that `later` did not observe; null if none.
  const Mbarrier* ReleasedPhase(uint64_t epoch, const VectorClock& later, uint64_t* phase) const;
  std::string ThreadName(uint32_t rank, uint32_t tid) const;
  // "<who> released <barrier> phase <phase> <when>, but the second access's thread did not
  // wait for that phase (...)".
  std::string NotWaitedFor(const std::string& who, const Mbarrier& m, uint64_t phase,
                           const char* when, const VectorClock& later) const;
  std::string BarrierName(const void* bar) const;

  // Where byte `offset` of `area` is, for a report.
  std::string Where(Fiber& f, Block& owner, int area, uint64_t offset) const;

  LaunchSanitizer* const launch_;
  const std::vector<Block*> ctas_;
  RaceShadow global_shadow_{0};
  uint64_t sync_ops_ = 0;  // global atomics and fences so far (global_races.h)
  std::vector<GlobalRun> global_log_;  // `released` unset; `who` empty until Finish
  std::vector<uint64_t> global_seq_;   // per run: sync_ops_ at its first access
  bool finished_ = false;
  const uint32_t threads_per_cta_;
  std::vector<Thread> threads_;
  std::vector<Component> components_;
  std::vector<NamedBarrier> named_;  // rank x 16
  std::unordered_map<const void*, Mbarrier> mbarriers_;
  std::unordered_map<uint64_t, uint32_t> mma_components_;  // rank << 32 | warpgroup
  // By a wgmma group's epoch: the epoch of the thread that first read for it (for reports).
  std::unordered_map<uint64_t, uint64_t> mma_issues_;
  uint64_t snapshots_ = 0;  // barrier snapshots taken (their ids: 1, 2, ...)
  VectorClock cluster_acc_;
  VectorClock cluster_done_[2];
  uint64_t cluster_phase_ = 0;
};

// Checks and empties `f`'s race_batch (host_abi.h): every runtime entry of a kernel thread
// and its exit call it first.
void FlushRaceBatch(Fiber& f);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_RUNTIME_RACES_H_
