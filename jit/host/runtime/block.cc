#include "jit/host/runtime/block.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "jit/host/runtime/cluster.h"

namespace warptrace::host {
namespace {

constexpr uint32_t kWarpSize = 32;

bool Names(uint32_t mask, uint32_t lane) { return (mask >> lane) & 1u; }

// The ids in first..first+size-1 for which `in(id)` holds, as runs: "0-4, 7, 9-31".
template <typename In>
std::string IdRuns(uint32_t first, uint32_t size, In in) {
  std::string out;
  for (uint32_t i = first; i < first + size;) {
    if (!in(i)) {
      ++i;
      continue;
    }
    uint32_t end = i;
    while (end + 1 < first + size && in(end + 1)) ++end;
    absl::StrAppend(&out, out.empty() ? "" : ", ", i,
                    end == i ? std::string() : absl::StrCat("-", end));
    i = end + 1;
  }
  return out;
}

// "thread 3" or "threads 3-5, 9" for IdRuns' output.
std::string Threads(const std::string& runs) {
  const bool one = runs.find_first_of(",-") == std::string::npos;
  return absl::StrCat(one ? "thread " : "threads ", runs);
}

const char* GroupKind(uint32_t size) { return size == kWarpSize ? "warp" : "warpgroup"; }

// A barrier's `what` is "<op> at <file>, line <n>" where the kernel names the place of the
// call (cuda_on_cpu.h's WARPTRACE_HOST_AT; the emitter's #line directives make <file> the
// builder construct), else just "<op>".
struct BarrierSite {
  absl::string_view op;
  absl::string_view where;  // empty when the caller did not say
};
BarrierSite SplitBarrierWhat(absl::string_view what) {
  const size_t at = what.find(" at ");
  if (at == absl::string_view::npos) return {what, {}};
  return {what.substr(0, at), what.substr(at + 4)};
}

}  // namespace

Block::Block(ReadyQueue* ready, uint64_t linear, WarptraceHostDim block_idx,
             WarptraceHostDim block_dim, WarptraceHostDim grid_dim, uint32_t sm_id,
             Fiber* fibers, uint32_t num_threads, char* static_shared, char* dynamic_shared,
             const WarptraceHostRuntime* rt, const WarptraceHostClock* clock,
             int64_t start_vtime)
    : ready_(ready),
      linear_(linear),
      block_idx_(block_idx),
      num_threads_(num_threads),
      fibers_(fibers),
      static_shared_(static_shared),
      dynamic_shared_(dynamic_shared),
      live_(num_threads) {
  for (uint32_t t = 0; t < num_threads; ++t) {
    Fiber& f = fibers[t];
    f.block = this;
    f.next_ready = nullptr;
    f.wait = WaitKind::kNone;
    f.spin_unchanged = false;
    f.last_was_spin = false;
    f.aborted = false;
    f.started = false;
    f.copy_groups.clear();
    f.open_copies.clear();
    f.vtime = start_vtime;
    WarptraceHostThread& a = f.abi;
    a.thread_idx = {t % block_dim.x, t / block_dim.x % block_dim.y,
                    t / block_dim.x / block_dim.y};
    a.block_idx = block_idx;
    a.block_dim = block_dim;
    a.grid_dim = grid_dim;
    a.sm_id = sm_id;
    a.warp = t / kWarpSize;
    a.lane = t % kWarpSize;
    a.linear_tid = t;
    a.dynamic_shared = dynamic_shared;
    a.fiber = &f;
    a.rt = rt;
    a.clock = clock;
    a.has_paired_globaltimer = 0;
    a.cluster_dim = {1, 1, 1};
    a.cluster_idx = block_idx;
    a.cluster_rank = 0;
    a.cluster_op = 0;
    a.statement = nullptr;
    a.dynamic_name = nullptr;
    a.dynamic_element_bytes = 0;
    a.race_pending = 0;
    a.race_last = 0;
  }
  warps_.resize((num_threads + kWarpSize - 1) / kWarpSize);
  const uint32_t tail = num_threads % kWarpSize;
  if (tail != 0) warps_.back().absent = ~((1u << tail) - 1);
}

bool Block::ClusterDeadlocked() const { return cluster_->Deadlocked(); }

std::string Block::Name() const {
  return absl::StrFormat("block (%u,%u,%u)", block_idx_.x, block_idx_.y, block_idx_.z);
}

Wait Block::BarrierIdError(uint32_t id, const char* what, std::string* error) const {
  *error = absl::StrFormat("%s: barrier id %u is out of range (0..%u)", what, id,
                           WARPTRACE_HOST_NUM_NAMED_BARRIERS - 1);
  return Wait::kDone;
}

Wait Block::BarrierCountError(uint32_t id, uint32_t count, const char* what,
                              std::string* error) const {
  const NamedBarrier& b = barriers_[id];
  if (b.arrived > 0) {
    *error = absl::StrFormat(
        "%s: threads disagree on the thread count of barrier %u (%u here, %u for the %u "
        "threads that arrived before)",
        what, id, count, b.expected, b.arrived);
  } else {
    *error = absl::StrFormat(
        "%s: barrier %u with a thread count of %u (a multiple of 32 up to the block's %u "
        "threads is required)",
        what, id, count, num_threads_);
  }
  return Wait::kDone;
}

void Block::DropWaiters() {
  for (NamedBarrier& b : barriers_) b.first_waiter = b.last_waiter = nullptr;
  mbarrier_waiters_.clear();
  for (std::vector<ExchangeGroup>& groups : exchanges_) {
    for (ExchangeGroup& g : groups) {
      g.first_waiter = g.last_waiter = nullptr;
      g.waiting = 0;
    }
  }
}

Block::ExchangeGroup& Block::ExchangeGroupOf(const Fiber& fiber, uint32_t size) {
  std::vector<ExchangeGroup>& groups = exchanges_[size == kWarpSize ? 0 : 1];
  const uint32_t index = fiber.abi.linear_tid / size;
  if (index >= groups.size()) {
    const uint32_t old = static_cast<uint32_t>(groups.size());
    groups.resize((num_threads_ + size - 1) / size);
    for (uint32_t i = old; i < groups.size(); ++i) {
      groups[i].first = i * size;
      groups[i].size = size;
    }
  }
  return groups[index];
}

std::string Block::ExitedIn(uint32_t first, uint32_t size) const {
  return IdRuns(first, size, [&](uint32_t t) {
    return t < num_threads_ && fibers_[t].wait == WaitKind::kExited;
  });
}

Wait Block::Exchange(Fiber* fiber, uint32_t group, const void* operands, uint32_t bytes,
                     const char* what, std::string* error) {
  if (group != WARPTRACE_HOST_GROUP_WARP && group != WARPTRACE_HOST_GROUP_WARPGROUP) {
    *error = absl::StrFormat(
        "%s: operand exchange among a group of %u threads (32: a warp, 128: a warpgroup)", what,
        group);
    return Wait::kDone;
  }
  const uint32_t first = fiber->abi.linear_tid / group * group;
  if (first + group > num_threads_) {
    *error = absl::StrFormat(
        "%s is %s-wide: %s %u is threads %u-%u, but the block has only %u threads (threads "
        "%u-%u do not exist and can never take part)",
        what, GroupKind(group), GroupKind(group), first / group, first, first + group - 1,
        num_threads_, num_threads_, first + group - 1);
    return Wait::kDone;
  }
  ExchangeGroup& g = ExchangeGroupOf(*fiber, group);
  const uint32_t position = fiber->abi.linear_tid - first;
  if (g.arrived > 0 && (g.what != what && std::strcmp(g.what, what) != 0)) [[unlikely]] {
    *error = absl::StrFormat(
        "%s in %s %u (threads %u-%u): thread %u issues %s while threads %s wait in %s; every "
        "thread of the %s must execute the same instruction",
        what, GroupKind(group), first / group, first, first + group - 1, fiber->abi.linear_tid,
        what, IdRuns(first, group, [&](uint32_t t) { return g.Has(t - first); }), g.what,
        GroupKind(group));
    return Wait::kDone;
  }
  if (g.arrived > 0 && g.bytes != bytes) [[unlikely]] {
    *error = absl::StrFormat(
        "%s in %s %u (threads %u-%u): thread %u exchanges %u bytes of operands while threads "
        "%s exchanged %u",
        what, GroupKind(group), first / group, first, first + group - 1, fiber->abi.linear_tid,
        bytes, IdRuns(first, group, [&](uint32_t t) { return g.Has(t - first); }), g.bytes);
    return Wait::kDone;
  }
  if (g.arrived == 0) {
    // A member that exited before the exchange began can never arrive. (One exiting
    // while the others wait is caught by Exit.)
    bool any_exited = false;  // from the warps' exit masks: no string on the hot path
    for (uint32_t w = first / kWarpSize; w < (first + group) / kWarpSize; ++w) {
      any_exited |= warps_[w].exited != 0;
    }
    if (std::string exited = any_exited ? ExitedIn(first, group) : std::string();
        !exited.empty()) [[unlikely]] {
      *error = absl::StrFormat(
          "%s in %s %u (threads %u-%u): %s exited and will never arrive; every thread of the "
          "%s must execute it",
          what, GroupKind(group), first / group, first, first + group - 1, Threads(exited),
          GroupKind(group));
      return Wait::kDone;
    }
    g.what = what;
    g.bytes = bytes;
    g.latest = fiber->vtime;
    std::vector<unsigned char>& buffer = g.buffers[g.fill];
    if (buffer.size() < uint64_t{group} * bytes) buffer.resize(uint64_t{group} * bytes);
  }
  if (g.Has(position)) [[unlikely]] {  // cannot happen: a member parks until completion
    *error = absl::StrFormat("%s: thread %u arrived twice at one exchange", what,
                             fiber->abi.linear_tid);
    return Wait::kDone;
  }
  unsigned char* buffer = g.buffers[g.fill].data();
  if (bytes > 0) std::memcpy(buffer + uint64_t{position} * bytes, operands, bytes);
  g.arrived_mask[position / 64] |= uint64_t{1} << (position % 64);
  g.latest = std::max(g.latest, fiber->vtime);
  if (++g.arrived < group) {
    fiber->next_ready = nullptr;
    if (g.last_waiter == nullptr) {
      g.first_waiter = fiber;
    } else {
      g.last_waiter->next_ready = fiber;
    }
    g.last_waiter = fiber;
    ++g.waiting;
    fiber->wait = WaitKind::kExchange;
    fiber->wait_object = group;
    fiber->wait_detail = first / group;
    fiber->wait_what = what;
    ++parked_;
    return Wait::kPark;
  }
  CompleteExchange(g, fiber, buffer);
  return Wait::kDone;
}

void Block::CompleteExchange(ExchangeGroup& g, Fiber* last, const unsigned char* buffer) {
  const uint64_t result = reinterpret_cast<uintptr_t>(buffer);
  for (Fiber* w = g.first_waiter; w != nullptr; w = w->next_ready) {
    w->result = result;
    w->vtime = g.latest;
    w->wait = WaitKind::kNone;
  }
  if (g.waiting > 0) {
    parked_ -= g.waiting;
    ready_->Splice(g.first_waiter, g.last_waiter, g.waiting);
  }
  last->result = result;
  last->vtime = g.latest;
  g.first_waiter = g.last_waiter = nullptr;
  g.waiting = 0;
  g.arrived = 0;
  g.arrived_mask[0] = g.arrived_mask[1] = 0;
  g.fill ^= 1u;
}

std::string Block::ExchangeExitError(const Fiber& fiber) const {
  for (uint32_t kind = 0; kind < 2; ++kind) {
    const uint32_t size = kind == 0 ? kWarpSize : WARPTRACE_HOST_GROUP_WARPGROUP;
    const uint32_t index = fiber.abi.linear_tid / size;
    if (index >= exchanges_[kind].size()) continue;
    const ExchangeGroup& g = exchanges_[kind][index];
    if (g.arrived == 0 || g.Has(fiber.abi.linear_tid - g.first)) continue;
    return absl::StrFormat(
        "thread %u exited while threads %s of %s %u (threads %u-%u) wait for it at %s; "
        "every thread of the %s must execute it",
        fiber.abi.linear_tid,
        IdRuns(g.first, size, [&](uint32_t t) { return g.Has(t - g.first); }), GroupKind(size),
        index, g.first, g.first + size - 1, g.what, GroupKind(size));
  }
  return "";
}

std::string Block::DescribeExchange(const Fiber& f) const {
  const uint32_t size = static_cast<uint32_t>(f.wait_object);
  const ExchangeGroup& g = exchanges_[size == kWarpSize ? 0 : 1][f.wait_detail];
  const auto arrived = [&](uint32_t t) { return g.Has(t - g.first); };
  const auto missing = [&](uint32_t t) { return !g.Has(t - g.first); };
  return absl::StrFormat(
      "wait at %s in %s %u (threads %u-%u): threads %s arrived, threads %s never did",
      f.wait_what, GroupKind(size), f.wait_detail, g.first, g.first + size - 1,
      IdRuns(g.first, size, arrived), IdRuns(g.first, size, missing));
}

Wait Block::WarpCollective(Fiber* fiber, int op, uint32_t mask, uint64_t value, uint32_t arg,
                           const char* what, std::string* error) {
  const uint32_t lane = fiber->abi.lane;
  WarpState& warp = warps_[fiber->abi.warp];
  if (!Names(mask, lane)) {
    *error = absl::StrFormat("%s: lane %u of warp %u passes mask 0x%08x, which does not name it",
                             what, lane, fiber->abi.warp, mask);
    return Wait::kDone;
  }
  if ((mask & warp.exited) != 0) {
    *error = absl::StrFormat(
        "%s in warp %u names lanes that have exited and will never arrive (mask 0x%08x, "
        "exited 0x%08x)",
        what, fiber->abi.warp, mask, mask & warp.exited);
    return Wait::kDone;
  }
  mask &= ~warp.absent;  // a partial warp's missing lanes are inactive, as on a GPU
  // The collective of this mask and kind waiting for this lane. Others may overlap its
  // mask (lanes that went ahead to a later collective, or are still in an earlier one):
  // they complete in their own time, and lanes that never meet show up as a deadlock.
  Collective* c = nullptr;
  for (Collective& pending : warp.pending) {
    if (pending.mask == mask && pending.op == op && (pending.arrived & (1u << lane)) == 0) {
      c = &pending;
      break;
    }
  }
  if (c == nullptr) {
    c = &warp.pending.emplace_back();
    c->op = op;
    c->mask = mask;
    c->what = what;
    c->latest = fiber->vtime;
  }
  c->latest = std::max(c->latest, fiber->vtime);
  c->values[lane] = value;
  c->args[lane] = arg;
  c->fibers[lane] = fiber;
  c->arrived |= 1u << lane;
  if (c->arrived != mask) {
    fiber->wait = WaitKind::kWarp;
    fiber->wait_object = fiber->abi.warp;
    fiber->wait_detail = mask;
    fiber->wait_what = what;
    ++parked_;
    return Wait::kPark;
  }
  Complete(*c);
  warp.pending.erase(warp.pending.begin() + (c - warp.pending.data()));
  return Wait::kDone;
}

void Block::Complete(Collective& c) {
  if (races_ != nullptr && c.op == WARPTRACE_HOST_WARP_SYNC) {  // orders the lanes' memory
    Fiber* lanes[kWarpSize];
    uint32_t n = 0;
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if (Names(c.mask, l) && c.fibers[l] != nullptr) lanes[n++] = c.fibers[l];
    }
    races_->WarpSync(lanes, n);
  }
  uint32_t ballot = 0;
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (Names(c.mask, l) && c.values[l] != 0) ballot |= 1u << l;
  }
  bool all_equal = true;
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (!Names(c.mask, l)) continue;
    uint64_t result = 0;
    switch (c.op) {
      case WARPTRACE_HOST_WARP_SHUFFLE: {
        const uint32_t src = c.args[l];
        result = src < kWarpSize && Names(c.mask, src) ? c.values[src] : c.values[l];
        break;
      }
      case WARPTRACE_HOST_WARP_BALLOT:
        result = ballot;
        break;
      case WARPTRACE_HOST_WARP_MATCH_ANY:
      case WARPTRACE_HOST_WARP_MATCH_ALL: {
        uint32_t same = 0;
        for (uint32_t o = 0; o < kWarpSize; ++o) {
          if (Names(c.mask, o) && c.values[o] == c.values[l]) same |= 1u << o;
        }
        if (same != c.mask) all_equal = false;
        result = same;
        break;
      }
      default:
        break;
    }
    c.fibers[l]->result = result;
  }
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (!Names(c.mask, l)) continue;
    Fiber* f = c.fibers[l];
    if (c.op == WARPTRACE_HOST_WARP_MATCH_ALL) f->result = all_equal ? c.mask : 0;
    f->vtime = c.latest;
    if (f->wait == WaitKind::kWarp) {  // parked (the completing lane is still running)
      f->wait = WaitKind::kNone;
      --parked_;
      ready_->Push(f);
    }
  }
}

uint32_t Block::ActiveMask(const Fiber* fiber) const {
  return ~(warps_[fiber->abi.warp].exited | warps_[fiber->abi.warp].absent);
}

void* Block::Shared(uint32_t site, uint64_t bytes, uint64_t align, uint64_t element_bytes,
                    const char* name, std::string* error) {
  if (site >= site_offsets_.size()) site_offsets_.resize(site + 1, -1);
  if (site_offsets_[site] < 0) {
    uint64_t offset = (static_shared_bytes_ + align - 1) / align * align;
    if (shadow_ != nullptr) {  // with redzones, when they fit
      uint64_t used = static_shared_bytes_;
      const int64_t placed = shadow_->Place(name, bytes, align, element_bytes, &used);
      if (placed >= 0) offset = static_cast<uint64_t>(placed);
    }
    if (offset + bytes > WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
      *error = absl::StrFormat(
          "static shared memory: __shared__ %s (%u bytes) brings the block's static shared "
          "memory to %u bytes, over the limit of %u bytes (48 KiB); use dynamic shared memory "
          "for more",
          name, bytes, offset + bytes, WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES);
      return nullptr;
    }
    site_offsets_[site] = static_cast<int64_t>(offset);
    static_shared_bytes_ = offset + bytes;
    if (site >= site_decls_.size()) site_decls_.resize(site + 1);
    site_decls_[site] = {name, bytes};
  }
  return static_shared_ + site_offsets_[site];
}

Block::MbarrierTimes& Block::TimesOf(const unsigned long long* bar) {
  for (MbarrierTimes& t : mbarrier_times_) {
    if (t.bar == bar) return t;
  }
  return mbarrier_times_.emplace_back(MbarrierTimes{bar, 0, 0});
}

int64_t Block::EndVtime() const {
  int64_t end = 0;
  for (uint32_t t = 0; t < num_threads_; ++t) end = std::max(end, fibers_[t].vtime);
  return end;
}

void Block::MbarrierArrived(Fiber* fiber, unsigned long long* bar, bool completed) {
  MbarrierTimes& times = TimesOf(bar);
  times.latest = std::max(times.latest, fiber->vtime);
  if (!completed) return;
  times.last_release = times.latest;
  times.latest = 0;
  const uintptr_t address = reinterpret_cast<uintptr_t>(bar);
  auto keep = std::stable_partition(
      mbarrier_waiters_.begin(), mbarrier_waiters_.end(), [&](Fiber* f) {
        return f->wait_object != address || WARPTRACE_HOST_MBAR_PHASE(*bar) == f->wait_detail;
      });
  for (auto it = keep; it != mbarrier_waiters_.end(); ++it) {
    (*it)->wait = WaitKind::kNone;
    (*it)->vtime = std::max((*it)->vtime, times.last_release);
    --parked_;
    ready_->Push(*it);
  }
  mbarrier_waiters_.erase(keep, mbarrier_waiters_.end());
}

Wait Block::MbarrierWait(Fiber* fiber, unsigned long long* bar, uint32_t parity,
                         const char* what) {
  if (WARPTRACE_HOST_MBAR_PHASE(*bar) != parity) {  // already completed: observe its time
    fiber->vtime = std::max(fiber->vtime, TimesOf(bar).last_release);
    return Wait::kDone;
  }
  fiber->wait = WaitKind::kMbarrier;
  fiber->wait_object = reinterpret_cast<uintptr_t>(bar);
  fiber->wait_detail = parity;
  fiber->wait_what = what;
  mbarrier_waiters_.push_back(fiber);
  ++parked_;
  return Wait::kPark;
}

void Block::Exit(Fiber* fiber, std::string* error) {
  fiber->wait = WaitKind::kExited;
  --live_;
  if (cluster_ != nullptr) cluster_->ThreadExited(fiber, cluster_rank_);
  WarpState& warp = warps_[fiber->abi.warp];
  warp.exited |= 1u << fiber->abi.lane;
  for (const Collective& c : warp.pending) {
    if (Names(c.mask, fiber->abi.lane)) {
      *error = absl::StrFormat(
          "thread %u (lane %u of warp %u) exited while lanes 0x%08x wait for it at %s with "
          "mask 0x%08x",
          fiber->abi.linear_tid, fiber->abi.lane, fiber->abi.warp, c.arrived, c.what, c.mask);
      return;
    }
  }
  if (std::string exchange = ExchangeExitError(*fiber); !exchange.empty()) {
    *error = std::move(exchange);
  }
}

std::string Block::Describe(const Fiber& f) const {
  switch (f.wait) {
    case WaitKind::kNone:
      return f.started ? "running" : "not started";
    case WaitKind::kExited:
      return "exited";
    case WaitKind::kBarrier: {
      const NamedBarrier& b = barriers_[f.wait_object];
      const BarrierSite site = SplitBarrierWhat(f.wait_what);
      return absl::StrFormat("wait at %s (barrier %u: %u of %u threads arrived)%s", site.op,
                             f.wait_object, b.arrived, b.expected,
                             site.where.empty() ? "" : absl::StrCat(" at ", site.where));
    }
    case WaitKind::kWarp: {
      uint32_t arrived = 0;
      for (const Collective& c : warps_[f.wait_object].pending) {
        if (c.mask == f.wait_detail) arrived = c.arrived;
      }
      return absl::StrFormat("wait at %s in warp %u (mask 0x%08x, lanes 0x%08x arrived)",
                             f.wait_what, f.wait_object, f.wait_detail, arrived);
    }
    case WaitKind::kMbarrier: {
      const unsigned long long word = *reinterpret_cast<const unsigned long long*>(f.wait_object);
      const int tx = WARPTRACE_HOST_MBAR_TX(word);
      // A phase left open by transactions: an expect_tx counting more bytes than the copies
      // completed (or copies completing more than it counted).
      const std::string bytes =
          tx > 0   ? absl::StrFormat("%d bytes of transactions still expected", tx)
          : tx < 0 ? absl::StrFormat("%d bytes completed beyond those expected (expect_tx "
                                     "counted fewer bytes than the copies completed)",
                                     -tx)
                   : std::string("no transactions outstanding");
      const BarrierSite site = SplitBarrierWhat(f.wait_what);
      return absl::StrFormat(
          "wait at mbarrier %s for the phase of parity %u to complete (%u of %u arrivals "
          "pending, %s)%s",
          SharedName(reinterpret_cast<const char*>(f.wait_object)), f.wait_detail,
          WARPTRACE_HOST_MBAR_PENDING(word), WARPTRACE_HOST_MBAR_EXPECTED(word), bytes,
          site.where.empty() ? "" : absl::StrCat(" in ", site.op, " at ", site.where));
    }
    case WaitKind::kExchange:
      return DescribeExchange(f);
    case WaitKind::kClusterBarrier: {
      const BarrierSite site = SplitBarrierWhat(f.wait_what);
      return absl::StrFormat("wait at %s (%s)%s", site.op,
                             cluster_ != nullptr ? cluster_->DescribeWait() : "no cluster",
                             site.where.empty() ? "" : absl::StrCat(" at ", site.where));
    }
    case WaitKind::kSpin:
      return absl::StrFormat("spin in %s on address %p (last value %u)", f.wait_what,
                             reinterpret_cast<void*>(f.wait_object), f.wait_detail);
  }
  return "";
}

std::string Block::SharedName(const char* bar) const {
  const bool in_static =
      bar >= static_shared_ && bar < static_shared_ + WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES;
  const int64_t offset = bar - (in_static ? static_shared_ : dynamic_shared_);
  if (in_static) {
    for (size_t site = 0; site < site_decls_.size() && site < site_offsets_.size(); ++site) {
      const int64_t start = site_offsets_[site];
      const SiteDecl& d = site_decls_[site];
      if (start < 0 || offset < start || offset >= start + static_cast<int64_t>(d.bytes)) {
        continue;
      }
      const int64_t index = (offset - start) / 8;
      return d.bytes > 8 ? absl::StrFormat("%s[%d] (shared memory offset %d)", d.name, index,
                                           offset)
                         : absl::StrFormat("%s (shared memory offset %d)", d.name, offset);
    }
  }
  return absl::StrFormat("(%sshared memory offset %d)", in_static ? "" : "dynamic ", offset);
}

std::string Block::Census() const {
  std::string out;
  uint32_t first = 0;
  std::string current = num_threads_ > 0 ? Describe(fibers_[0]) : "";
  for (uint32_t t = 1; t <= num_threads_; ++t) {
    std::string next = t < num_threads_ ? Describe(fibers_[t]) : "";
    if (t < num_threads_ && next == current) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ",
                    t - 1 == first ? absl::StrCat("thread ", first)
                                   : absl::StrCat("threads ", first, "-", t - 1),
                    ": ", current);
    first = t;
    current = std::move(next);
  }
  // A block barrier that threads exited without reaching: reached only by the threads that
  // took some branch (a barrier under a divergent condition, or after an early return).
  uint32_t exited = 0;
  // Per barrier id, the places its waiters wait at (in thread order, each once).
  std::vector<std::string> waited_at[WARPTRACE_HOST_NUM_NAMED_BARRIERS];
  bool waited[WARPTRACE_HOST_NUM_NAMED_BARRIERS] = {};
  for (uint32_t t = 0; t < num_threads_; ++t) {
    const Fiber& f = fibers_[t];
    if (f.wait == WaitKind::kExited) ++exited;
    if (f.wait == WaitKind::kBarrier && f.wait_object < WARPTRACE_HOST_NUM_NAMED_BARRIERS) {
      waited[f.wait_object] = true;
      std::vector<std::string>& places = waited_at[f.wait_object];
      const std::string where(SplitBarrierWhat(f.wait_what).where);
      if (!where.empty() && std::find(places.begin(), places.end(), where) == places.end()) {
        places.push_back(where);
      }
    }
  }
  for (uint32_t id = 0; id < WARPTRACE_HOST_NUM_NAMED_BARRIERS && exited > 0; ++id) {
    const NamedBarrier& b = barriers_[id];
    if (!waited[id] || b.expected - b.arrived > exited) continue;
    absl::StrAppend(&out, absl::StrFormat(
                              "; barrier %u is divergent: %u of its %u threads never arrive "
                              "and %u threads exited without reaching it%s (a barrier under a "
                              "condition only some threads take, or after a return some "
                              "threads took)",
                              id, b.expected - b.arrived, b.expected, exited,
                              waited_at[id].empty()
                                  ? ""
                                  : absl::StrCat(" at ", absl::StrJoin(waited_at[id], " and "))));
  }
  return out;
}

}  // namespace warptrace::host
