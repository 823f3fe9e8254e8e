#include "jit/host/runtime/worker.h"

#include <signal.h>

#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "jit/host/runtime/abi_table.h"
#include "jit/host/runtime/races.h"

namespace warptrace::host {

std::string ThreadName(const Fiber& f) {
  const WarptraceHostThread& a = f.abi;
  return absl::StrFormat("block (%u,%u,%u) thread (%u,%u,%u)", a.block_idx.x, a.block_idx.y,
                         a.block_idx.z, a.thread_idx.x, a.thread_idx.y, a.thread_idx.z);
}

void Worker::EndWithoutUnwinding(Fiber* f, absl::StatusCode code, const char* message) {
  {  // nothing that owns memory may stay on the abandoned frames
    launch_->Fail(absl::Status(code, absl::StrCat(ThreadName(*f), ": ", message)));
    error_.clear();  // `message` may have been it
    f->aborted = true;
    StopClock(f, NowNs(f));
    std::string ignored;
    f->block->Exit(f, &ignored);
  }
  SwitchFiber(f->context, scheduler_context_);
  __builtin_trap();
}

void Worker::LandFault(void* fiber) {
  Fiber* f = Self(fiber);
  Worker& w = OwnerOf(f);
  {  // the message lives in the worker's error string, not on the abandoned frames
    const uintptr_t address = f->fault_address;
    const char* kind = f->fault_signal == SIGBUS ? "bus error" : "invalid memory access";
    std::optional<std::string> hit = DescribeGuardFault(address);
    const uintptr_t lo = reinterpret_cast<uintptr_t>(f->stack_lo);
    if (!hit.has_value() && address < lo && address + GuardPageSize() >= lo) {
      hit = absl::StrFormat(
          "a stack overflow: the thread's fiber stack of %u bytes is exhausted "
          "(HostDeviceOptions::fiber_stack_bytes)",
          f->stack_hi - f->stack_lo);
    }
    if (!hit.has_value()) {
      hit = "not in or next to any shared memory or device buffer (a null or stray pointer?)";
    }
    w.error_ = absl::StrFormat("%s at address %p: %s", kind, reinterpret_cast<void*>(address),
                               *hit);
  }
  w.EndWithoutUnwinding(f, absl::StatusCode::kOutOfRange, w.error_.c_str());
}

uint64_t Worker::NextBlock() {
  if (!launch_->deterministic) return launch_->next_block.fetch_add(1);
  return index_ + assigned_++ * all_->size();
}

void Worker::FiberMain(void* arg) {
  Fiber* f = Self(arg);
  Worker& w = OwnerOf(f);
  if (!f->aborted) {
    try {
      w.launch_->spec.entry(w.launch_->spec.args);
      FlushRaceBatch(*f);  // its last accesses, before its exit ends what they raced with
    } catch (const FiberAborted&) {
      // The launch failed; the reason is in the launch state.
    } catch (const std::exception& e) {
      w.launch_->Fail(absl::InternalError(absl::StrCat(ThreadName(*f), " threw: ", e.what())));
    } catch (...) {
      w.launch_->Fail(
          absl::InternalError(absl::StrCat(ThreadName(*f), " threw a non-std exception")));
    }
  }
  StopClock(f, NowNs(f));
  w.Publish(f->vtime);
  {  // nothing that owns memory may stay on this frame: it is never returned from
    std::string error;
    f->block->Exit(f, &error);
    if (!error.empty() && !f->aborted) {
      w.launch_->Fail(absl::FailedPreconditionError(
          absl::StrCat(f->block->Name(), ": ", error)));
    }
  }
  SwitchFiber(f->context, w.scheduler_context_);
  __builtin_trap();  // an exited fiber is never resumed
}

absl::Status Worker::StartBlock(Slot& slot, uint64_t linear) {
  const LaunchSpec& spec = launch_->spec;
  const uint32_t n = launch_->num_threads;
  if (slot.fibers.size() < n) slot.fibers.resize(n);
  while (slot.stacks.size() < n) {
    absl::StatusOr<FiberStack> stack = FiberStack::Allocate(options_.fiber_stack_bytes);
    if (!stack.ok()) return stack.status();
    slot.stacks.push_back(*std::move(stack));
  }
  if (!slot.static_shared.mapped()) {
    ASSIGN_OR_RETURN(slot.static_shared,
                     GuardedRegion::Map(WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES, 128,
                                        "static shared memory"));
  }
  if (!slot.dynamic_shared.mapped() || slot.dynamic_shared.size() != spec.dynamic_shared_bytes ||
      slot.dynamic_shared_align != spec.dynamic_shared_align) {
    slot.dynamic_shared = GuardedRegion();  // unmapped first: at most one per slot
    ASSIGN_OR_RETURN(slot.dynamic_shared,
                     GuardedRegion::Map(spec.dynamic_shared_bytes, spec.dynamic_shared_align,
                                        "dynamic shared memory"));
    slot.dynamic_shared_align = spec.dynamic_shared_align;
  }
  const WarptraceHostDim idx = {static_cast<uint32_t>(linear % spec.grid.x),
                                static_cast<uint32_t>(linear / spec.grid.x % spec.grid.y),
                                static_cast<uint32_t>(linear / spec.grid.x / spec.grid.y)};
  slot.finished_in_cluster = false;
  Block& block = slot.block.emplace(&ready_, linear, idx, spec.block, spec.grid, index_,
                                    slot.fibers.data(), n, slot.static_shared.data(),
                                    slot.dynamic_shared.data(), &AbiTable(), &launch_->clock,
                                    slot.end_vtime);
  if (launch_->sanitizer != nullptr) {
    block.SetShadow(std::make_unique<BlockShadow>(launch_->sanitizer.get(),
                                                  slot.static_shared.data(),
                                                  slot.dynamic_shared.data(),
                                                  spec.dynamic_shared_bytes));
  }
  if (launch_->sanitizer != nullptr &&
      (launch_->sanitizer->checks() & WARPTRACE_HOST_SANITIZE_RACES) != 0 &&
      launch_->cluster_size <= 1) {  // a cluster's CTAs share one (AdmitClusters)
    block.SetRaces(std::make_shared<RaceDomain>(launch_->sanitizer.get(),
                                                std::vector<Block*>{&block}, n));
  }
  for (uint32_t t = 0; t < n; ++t) {
    Fiber* f = block.fiber(t);
    f->owner = this;
    // The shared-memory window wgmma descriptors address (jit/host/device/wgmma_host.h).
    f->abi.static_shared = slot.static_shared.data();
    f->abi.dynamic_shared_bytes = spec.dynamic_shared_bytes;
    f->stack_lo = slot.stacks[t].bottom();
    f->stack_hi = slot.stacks[t].bottom() + slot.stacks[t].size();
    f->abi.stack_lo = reinterpret_cast<uintptr_t>(f->stack_lo);
    f->abi.stack_bytes = slot.stacks[t].size();
    if (block.shadow() != nullptr) block.shadow()->Attach(*f);
    f->context.Start(slot.stacks[t], &Worker::FiberMain, f);
    MakeReady(f);
  }
  return absl::OkStatus();
}

// Fills free slots with the next blocks of the grid. False when nothing is resident.
bool Worker::Admit() {
  if (launch_->cluster_size > 1) {
    AdmitClusters();
    return HasResident();
  }
  if (!launch_->failed.load(std::memory_order_relaxed)) {
    for (Slot& slot : slots_) {
      if (slot.block.has_value()) continue;
      const uint64_t linear = NextBlock();
      if (linear >= launch_->num_blocks) break;
      absl::Status started = StartBlock(slot, linear);
      if (!started.ok()) {
        launch_->Fail(absl::Status(started.code(),
                                   absl::StrCat("block ", linear, ": ", started.message())));
        break;
      }
      if (idle_) BecomeBusy();
    }
  }
  return HasResident();
}

void Worker::AdmitClusters() {
  const LaunchSpec& spec = launch_->spec;
  const WarptraceHostDim& c = spec.cluster;
  const uint32_t size = launch_->cluster_size;
  while (!launch_->failed.load(std::memory_order_relaxed)) {
    std::vector<Slot*> free;
    for (Slot& slot : slots_) {
      if (!slot.block.has_value() && slot.cluster == nullptr) free.push_back(&slot);
    }
    if (free.size() < size) return;
    const uint64_t index = NextBlock();
    if (index >= launch_->num_clusters) return;
    const uint32_t ncx = spec.grid.x / c.x;
    const uint32_t ncy = spec.grid.y / c.y;
    const WarptraceHostDim idx = {static_cast<uint32_t>(index % ncx),
                                  static_cast<uint32_t>(index / ncx % ncy),
                                  static_cast<uint32_t>(index / ncx / ncy)};
    auto cluster = std::make_shared<Cluster>(&ready_, c, idx);
    std::vector<Block*> ctas;
    for (uint32_t rank = 0; rank < size; ++rank) {
      const uint64_t bx = uint64_t{idx.x} * c.x + rank % c.x;
      const uint64_t by = uint64_t{idx.y} * c.y + rank / c.x % c.y;
      const uint64_t bz = uint64_t{idx.z} * c.z + rank / c.x / c.y;
      const uint64_t linear = bx + spec.grid.x * (by + uint64_t{spec.grid.y} * bz);
      Slot& slot = *free[rank];
      absl::Status started = StartBlock(slot, linear);
      if (!started.ok()) {
        launch_->Fail(absl::Status(started.code(),
                                   absl::StrCat("block ", linear, ": ", started.message())));
        return;
      }
      slot.cluster = cluster;
      cluster->Add(rank, &*slot.block, slot.static_shared.data(), slot.dynamic_shared.data(),
                   spec.dynamic_shared_bytes);
      ctas.push_back(&*slot.block);
    }
    if (launch_->sanitizer != nullptr &&
        (launch_->sanitizer->checks() & WARPTRACE_HOST_SANITIZE_RACES) != 0) {
      auto races =
          std::make_shared<RaceDomain>(launch_->sanitizer.get(), ctas, launch_->num_threads);
      for (Block* cta : ctas) cta->SetRaces(races);
    }
    if (idle_) BecomeBusy();
  }
}

void Worker::FinishClusterBlock(Slot& slot) {
  Block& block = *slot.block;
  Cluster& cluster = *slot.cluster;
  std::string error;
  cluster.CtaFinished(block.cluster_rank(), &error);
  if (!error.empty()) launch_->Fail(absl::FailedPreconditionError(error));
  if (!cluster.Finished()) return;
  if (block.races() != nullptr) block.races()->Finish();
  // Every CTA exited: the cluster's slots (and the shared memory peers could reach) are free.
  const Cluster* done = &cluster;
  for (Slot& s : slots_) {
    if (s.cluster.get() != done) continue;
    s.end_vtime = s.block->EndVtime();
    s.block.reset();
    s.cluster.reset();
  }
}

void Worker::Run(Fiber* f) {
  Enter(f, NowNs(f));
  SwitchFiber(scheduler_context_, f->context);
}

void Worker::AfterRun(Fiber* f) {
  Block& block = *f->block;
  if (f->wait == WaitKind::kSpin && f->spin_unchanged) {
    ++unchanged_spins_;
  } else {
    unchanged_spins_ = 0;
    idle_rounds_ = 0;
    if (idle_) BecomeBusy();
  }
  if (block.Finished()) {
    for (Slot& slot : slots_) {
      if (!slot.block.has_value() || &*slot.block != &block) continue;
      if (slot.cluster != nullptr) {
        if (!slot.finished_in_cluster) {
          slot.finished_in_cluster = true;
          FinishClusterBlock(slot);
        }
        return;
      }
      if (block.races() != nullptr) block.races()->Finish();
      slot.end_vtime = block.EndVtime();
      slot.block.reset();
    }
    return;
  }
  if (block.Deadlocked() && !launch_->failed.load()) {
    const Cluster* cluster = block.cluster();
    launch_->Fail(absl::DeadlineExceededError(absl::StrFormat(
        "deadlock in %s (linear %u, virtual SM %u): every thread that has not exited waits on "
        "a barrier, warp collective or mbarrier of the %s that can no longer complete: %s",
        cluster != nullptr ? absl::StrFormat("the cluster of %s", block.Name()) : block.Name(),
        block.linear(), index_, cluster != nullptr ? "cluster" : "block",
        cluster != nullptr ? cluster->Census() : block.Census())));
  }
}

void Worker::AbortResident() {
  if (aborted_resident_) return;
  aborted_resident_ = true;
  {
    absl::MutexLock lock(&launch_->mu);
    if (launch_->want_census) {
      for (Slot& slot : slots_) {
        if (!slot.block.has_value()) continue;
        launch_->census.push_back(absl::StrFormat("%s (linear %u) on virtual SM %u: %s",
                                                  slot.block->Name(), slot.block->linear(),
                                                  index_, slot.block->Census()));
      }
    }
  }
  for (Slot& slot : slots_) {
    if (!slot.block.has_value()) continue;
    Block& block = *slot.block;
    block.DropWaiters();  // their chains are rebuilt below as one ready queue
    if (slot.cluster != nullptr) slot.cluster->DropWaiters();
    for (uint32_t t = 0; t < block.num_threads(); ++t) {
      Fiber* f = block.fiber(t);
      if (f->wait == WaitKind::kExited) continue;
      f->aborted = true;
      if (f->wait == WaitKind::kBarrier || f->wait == WaitKind::kWarp ||
          f->wait == WaitKind::kMbarrier || f->wait == WaitKind::kExchange ||
          f->wait == WaitKind::kClusterBarrier) {
        f->wait = WaitKind::kNone;
        block.Unpark();
        MakeReady(f);
      }
    }
  }
}

void Worker::BecomeIdle() {
  idle_ = true;
  launch_->idle_workers.fetch_add(1);
}

void Worker::BecomeBusy() {
  idle_ = false;
  have_snapshot_ = false;
  launch_->idle_workers.fetch_sub(1);
  launch_->busy_transitions.fetch_add(1);
}

// A full round of this worker's ready fibers spun without seeing a change.
void Worker::Idle(std::vector<std::unique_ptr<Worker>>& all) {
  unchanged_spins_ = 0;
  if (!idle_) BecomeIdle();
  rounds().fetch_add(1);
  if (launch_->idle_workers.load() == all.size()) {
    const uint64_t transitions = launch_->busy_transitions.load();
    if (!have_snapshot_ || transitions != snapshot_transitions_) {
      have_snapshot_ = true;
      snapshot_transitions_ = transitions;
      snapshot_rounds_.clear();
      for (auto& w : all) snapshot_rounds_.push_back(w->rounds().load());
    } else {
      bool all_polled_again = true;
      for (size_t i = 0; i < all.size(); ++i) {
        const uint64_t r = all[i]->rounds().load();
        if (r != kNoRounds && r < snapshot_rounds_[i] + 2) all_polled_again = false;
      }
      if (all_polled_again && launch_->idle_workers.load() == all.size()) {
        launch_->Fail(absl::DeadlineExceededError(
                          "deadlock: every resident block's threads wait, and a full round of "
                          "their spin-waits saw no change"),
                      /*with_census=*/true);
      }
    }
  }
  if (++idle_rounds_ > 2) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void Worker::RunLaunch(LaunchState& launch, std::vector<std::unique_ptr<Worker>>& all) {
  launch_ = &launch;
  all_ = &all;
  latest_.store(launch.start_ns);
  // A cluster's CTAs are resident together: at least as many slots as it has CTAs.
  if (slots_.size() < launch.cluster_size) slots_.resize(launch.cluster_size);
  for (Slot& slot : slots_) {
    slot.end_vtime = launch.start_ns;
    slot.cluster.reset();
  }
  idle_ = false;
  have_snapshot_ = false;
  aborted_resident_ = false;
  unchanged_spins_ = 0;
  idle_rounds_ = 0;
  rounds().store(0);
  steps_ = 0;
  assigned_ = 0;
  for (;;) {
    if (launch.failed.load(std::memory_order_relaxed)) AbortResident();
    if (!Admit()) break;
    Fiber* f = PopReady();
    if (f == nullptr) {  // cannot happen: a block with no runnable thread is deadlocked
      launch.Fail(absl::InternalError("host runtime: resident blocks but no runnable thread"),
                  true);
      AbortResident();
      continue;
    }
    Run(f);
    AfterRun(running_);  // fibers may have switched among themselves
    if (unchanged_spins_ > 0 && unchanged_spins_ >= ready_.size()) Idle(all);
    if (++steps_ >= kStepsPerClockCheck) {
      steps_ = 0;
      if (std::chrono::steady_clock::now() > launch.deadline && !launch.failed.load()) {
        launch.Fail(absl::DeadlineExceededError(absl::StrCat(
                        "the launch ran longer than its limit of ",
                        absl::FormatDuration(options_.launch_timeout),
                        " (RuntimeOptions::launch_timeout; a livelock?)")),
                    /*with_census=*/true);
      }
    }
  }
  if (!idle_) BecomeIdle();
  rounds().store(kNoRounds);
  warptrace_host_current = nullptr;
}


}  // namespace warptrace::host
