#include "jit/host/runtime/cluster.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace warptrace::host {

Cluster::Cluster(ReadyQueue* ready, WarptraceHostDim dim, WarptraceHostDim idx)
    : ready_(ready), dim_(dim), idx_(idx) {
  ctas_.resize(ClusterCount(dim));
}

void Cluster::Add(uint32_t rank, Block* block, char* static_shared, char* dynamic_shared,
                  uint64_t dynamic_shared_bytes) {
  Cta& cta = ctas_[rank];
  cta.block = block;
  cta.static_shared = static_shared;
  cta.dynamic_shared = dynamic_shared;
  cta.dynamic_shared_bytes = dynamic_shared_bytes;
  cta.mapped_by.assign(ctas_.size(), -1);
  cta.arrival.assign(block->num_threads(), -1);
  cta.arrived_at.assign(block->num_threads(), "");
  live_threads_ += block->num_threads();
  block->SetCluster(this, rank);
  for (uint32_t t = 0; t < block->num_threads(); ++t) {
    WarptraceHostThread& a = block->fiber(t)->abi;
    a.cluster_dim = dim_;
    a.cluster_idx = idx_;
    a.cluster_rank = rank;
  }
}

std::string Cluster::CtaName(uint32_t rank) const {
  if (rank >= ctas_.size() || ctas_[rank].block == nullptr) {
    return absl::StrCat("CTA rank ", rank);
  }
  return absl::StrCat("CTA rank ", rank, " (", ctas_[rank].block->Name(), ")");
}

Wait Cluster::Barrier(Fiber* f, uint32_t rank, bool arrive, bool wait, const char* what,
                      std::string* error) {
  Cta& cta = ctas_[rank];
  const uint32_t t = f->abi.linear_tid;
  if (arrive) {
    if (cta.arrival[t] >= 0) {
      *error = absl::StrFormat(
          "%s: thread %u of %s arrived on the cluster barrier twice without a "
          "barrier.cluster.wait between (its first arrival: %s); every arrive needs its wait",
          what, t, CtaName(rank), cta.arrived_at[t]);
      return Wait::kDone;
    }
    cta.arrival[t] = phase_;
    cta.arrived_at[t] = what;
    if (arrived_ == 0 || f->vtime > latest_) latest_ = f->vtime;
    ++arrived_;
    if (arrived_ == live_threads_) CompletePhase();
  }
  if (!wait) return Wait::kDone;
  if (cta.arrival[t] < 0) {
    *error = absl::StrFormat(
        "%s: thread %u of %s waits on the cluster barrier without having arrived "
        "(barrier.cluster.arrive) since its last wait: it would wait forever on a GPU",
        what, t, CtaName(rank));
    return Wait::kDone;
  }
  if (cta.arrival[t] < phase_) {  // its phase completed
    cta.arrival[t] = -1;
    f->vtime = std::max(f->vtime, latest_);
    return Wait::kDone;
  }
  f->next_ready = nullptr;
  if (last_waiter_ == nullptr) {
    first_waiter_ = f;
  } else {
    last_waiter_->next_ready = f;
  }
  last_waiter_ = f;
  f->wait = WaitKind::kClusterBarrier;
  f->wait_what = what;
  cta.block->Park();
  return Wait::kPark;
}

void Cluster::CompletePhase() {
  ++phase_;
  arrived_ = 0;
  uint64_t released = 0;
  for (Fiber* w = first_waiter_; w != nullptr; w = w->next_ready) {
    w->wait = WaitKind::kNone;
    w->vtime = std::max(w->vtime, latest_);
    ctas_[w->abi.cluster_rank].arrival[w->abi.linear_tid] = -1;
    w->block->Unpark();
    ++released;
  }
  if (released > 0) ready_->Splice(first_waiter_, last_waiter_, released);
  first_waiter_ = last_waiter_ = nullptr;
}

void Cluster::ThreadExited(Fiber* f, uint32_t rank) {
  Cta& cta = ctas_[rank];
  const uint32_t t = f->abi.linear_tid;
  --live_threads_;
  if (cta.arrival[t] == phase_) --arrived_;  // arrived, exits before the phase completes
  cta.arrival[t] = -1;
  // "all non-exited threads of the cluster": the exit may be what the others waited for.
  if (arrived_ > 0 && arrived_ == live_threads_) CompletePhase();
}

void Cluster::CtaFinished(uint32_t rank, std::string* error) {
  Cta& cta = ctas_[rank];
  cta.finished = true;
  for (uint32_t peer = 0; peer < ctas_.size(); ++peer) {
    if (peer == rank || ctas_[peer].finished) continue;
    const int64_t safe_after = cta.mapped_by[peer];
    if (safe_after < 0 || phase_ > safe_after) continue;
    *error = absl::StrFormat(
        "%s exited while %s, which mapped its shared memory (mapa or a remote mbarrier "
        "arrival), has not passed a cluster barrier since: on a GPU the peer may still read "
        "or write shared memory that no longer exists. End the kernel with a cluster barrier "
        "(barrier.cluster.arrive + wait, warptrace_cluster_sync()) in every CTA",
        CtaName(rank), CtaName(peer));
    return;
  }
}

bool Cluster::Finished() const {
  for (const Cta& cta : ctas_) {
    if (!cta.finished) return false;
  }
  return true;
}

bool Cluster::Deadlocked() const {
  bool any_live = false;
  for (const Cta& cta : ctas_) {
    if (cta.block == nullptr || cta.block->Finished()) continue;
    any_live = true;
    if (cta.block->parked() != cta.block->live()) return false;
  }
  return any_live;
}

bool Cluster::Locate(uint32_t rank, const void* p, uint64_t* offset, bool* in_static) const {
  const Cta& cta = ctas_[rank];
  const char* c = static_cast<const char*>(p);
  if (c >= cta.static_shared && c < cta.static_shared + WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    *offset = static_cast<uint64_t>(c - cta.static_shared);
    *in_static = true;
    return true;
  }
  if (c >= cta.dynamic_shared && c < cta.dynamic_shared + cta.dynamic_shared_bytes) {
    *offset = static_cast<uint64_t>(c - cta.dynamic_shared);
    *in_static = false;
    return true;
  }
  return false;
}

void* Cluster::Map(Fiber* f, uint32_t from, const void* p, uint32_t rank, bool track,
                   const char* what, std::string* error) {
  if (rank >= ctas_.size()) {
    *error = absl::StrFormat(
        "%s: thread %u of %s maps shared memory into CTA rank %u, outside its cluster of %u "
        "CTAs (%ux%ux%u; ranks 0-%u)",
        what, f->abi.linear_tid, CtaName(from), rank, ctas_.size(), dim_.x, dim_.y, dim_.z,
        ctas_.size() - 1);
    return nullptr;
  }
  uint64_t offset = 0;
  bool in_static = false;
  if (!Locate(from, p, &offset, &in_static)) {
    *error = absl::StrFormat(
        "%s: thread %u of %s maps address %p, which is not in its shared memory (mapa takes "
        "an address of the CTA's own shared memory)",
        what, f->abi.linear_tid, CtaName(from), p);
    return nullptr;
  }
  Cta& target = ctas_[rank];
  if (target.finished) {
    *error = absl::StrFormat(
        "%s: thread %u of %s maps shared memory of %s, which has exited (a CTA must not exit "
        "while a peer can still reach its shared memory: end the kernel with a cluster "
        "barrier in every CTA)",
        what, f->abi.linear_tid, CtaName(from), CtaName(rank));
    return nullptr;
  }
  if (track && rank != from) {
    // Safe to outlive once a phase completes to which this thread arrives after the access.
    const int64_t safe_after =
        ctas_[from].arrival[f->abi.linear_tid] >= 0 ? phase_ + 1 : phase_;
    target.mapped_by[from] = std::max(target.mapped_by[from], safe_after);
  }
  return (in_static ? target.static_shared : target.dynamic_shared) + offset;
}

Block* Cluster::OwnerOf(const void* p) const {
  for (uint32_t rank = 0; rank < ctas_.size(); ++rank) {
    uint64_t offset = 0;
    bool in_static = false;
    if (ctas_[rank].block != nullptr && Locate(rank, p, &offset, &in_static)) {
      return ctas_[rank].block;
    }
  }
  return nullptr;
}

void Cluster::Initialized(Fiber* f, uint32_t rank, const void* bar) {
  // Visible once a phase completes that the initializing thread arrives at after the init.
  init_visible_after_[bar] =
      ctas_[rank].arrival[f->abi.linear_tid] >= 0 ? phase_ + 1 : phase_;
}

bool Cluster::InitVisible(const void* bar) const {
  const auto it = init_visible_after_.find(bar);
  return it == init_visible_after_.end() || phase_ > it->second;
}

void Cluster::DropWaiters() { first_waiter_ = last_waiter_ = nullptr; }

std::string Cluster::DescribeWait() const {
  return absl::StrFormat("cluster barrier phase %d: %u of %u non-exited threads of the cluster "
                         "arrived",
                         phase_, arrived_, live_threads_);
}

std::string Cluster::Census() const {
  std::string out;
  for (uint32_t rank = 0; rank < ctas_.size(); ++rank) {
    if (ctas_[rank].block == nullptr) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ", CtaName(rank), ": ",
                    ctas_[rank].finished ? "exited" : ctas_[rank].block->Census());
  }
  return out;
}

}  // namespace warptrace::host
