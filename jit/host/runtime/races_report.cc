// The races check's reports (races.h): both accesses, by thread or async agent and builder
// statement, and the ordering that was missing between them.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/races.h"
#include "jit/host/runtime/sanitizer.h"

namespace warptrace::host {

std::string RaceDomain::ThreadName(uint32_t rank, uint32_t tid) const {
  const Block& b = *ctas_[rank];
  const WarptraceHostThread& a = const_cast<Block&>(b).fiber(tid)->abi;
  return absl::StrFormat("block (%u,%u,%u) thread (%u,%u,%u)", a.block_idx.x, a.block_idx.y,
                         a.block_idx.z, a.thread_idx.x, a.thread_idx.y, a.thread_idx.z);
}

std::string RaceDomain::BarrierName(const void* bar) const {
  auto it = mbarriers_.find(bar);
  if (it == mbarriers_.end()) return "an mbarrier";
  const Block& owner = *ctas_[it->second.rank];
  std::string name = absl::StrCat("mbarrier ", owner.SharedName(static_cast<const char*>(bar)));
  if (ctas_.size() > 1) absl::StrAppend(&name, " of CTA rank ", it->second.rank);
  return name;
}

// "the TMA load issued at P (delivered on mbarrier full[1] ... phase 4)", "thread T's write
// at P", ...
std::string RaceDomain::DescribeEarlier(const Hit& hit) const {
  const Component& c = components_[RaceComponent(hit.epoch)];
  const uint32_t clock = RaceClock(hit.epoch);
  const char* access = hit.write ? "write" : "read";
  switch (c.agent) {
    case Agent::kThread:
      return absl::StrCat(ThreadName(c.rank, c.index), "'s ", access, " at ",
                          RaceStatement(hit.at));
    case Agent::kMbarrier:
      return absl::StrCat("the TMA load issued at ", RaceStatement(hit.at), " (delivered on ",
                          BarrierName(c.bar), ", phase ", clock - 1, ")");
    case Agent::kMma:
      return absl::StrFormat(
          "the shared-memory operand read of wgmma group %u of warpgroup %u (threads %u-%u) "
          "of %s, issued at %s (it reads until a wgmma.wait_group retires the group)",
          clock, c.index, c.index * 128, c.index * 128 + 127, ctas_[c.rank]->Name(),
          RaceStatement(hit.at));
    case Agent::kCpAsync:
      return absl::StrFormat("the cp.async (group %u) of %s issued at %s", clock,
                             ThreadName(c.rank, c.index), RaceStatement(hit.at));
    case Agent::kBulk:
      return absl::StrFormat(
          "the TMA store (bulk group %u) of %s issued at %s (it reads until "
          "cp.async.bulk.wait_group.read covers the group)",
          clock, ThreadName(c.rank, c.index), RaceStatement(hit.at));
  }
  return "an access";
}

// What would have ordered the earlier access `hit` before an access whose thread has clock
// `later`.
std::string RaceDomain::Missing(const Hit& hit, const VectorClock& later) const {
  const uint32_t component = RaceComponent(hit.epoch);
  const Component& c = components_[component];
  const uint32_t clock = RaceClock(hit.epoch);
  const uint32_t seen = later.Get(component);
  switch (c.agent) {
    case Agent::kMbarrier:
      return absl::StrCat("no wait on ", BarrierName(c.bar), " for phase ", clock - 1,
                          " between them (the second access's thread ",
                          seen == 0 ? "never observed a phase of it"
                                    : absl::StrCat("has observed its phases up to ", seen - 1),
                          ")");
    case Agent::kMma:
      return MissingRetire(hit, later);
    case Agent::kCpAsync:
      return absl::StrFormat(
          "no cp.async.wait_group of %s covering group %u, then a barrier, before the "
          "second access",
          ThreadName(c.rank, c.index), clock);
    case Agent::kBulk:
      return absl::StrFormat(
          "no cp.async.bulk.wait_group.read of %s covering bulk group %u before the second "
          "access",
          ThreadName(c.rank, c.index), clock);
    case Agent::kThread:
      break;
  }
  // A thread's own access: which phase released it, if one did, that the later access did
  // not wait for.
  uint64_t phase = 0;
  if (const Mbarrier* m = ReleasedPhase(hit.epoch, later, &phase); m != nullptr) {
    return NotWaitedFor(ThreadName(c.rank, c.index), *m, phase, "after its access", later);
  }
  return "no barrier (__syncthreads, bar.sync), mbarrier phase wait or async completion "
         "orders them";
}

const RaceDomain::Mbarrier* RaceDomain::ReleasedPhase(uint64_t epoch, const VectorClock& later,
                                                      uint64_t* phase) const {
  const uint32_t component = RaceComponent(epoch);
  const uint32_t clock = RaceClock(epoch);
  const Mbarrier* best = nullptr;
  for (const auto& [bar, m] : mbarriers_) {
    for (uint64_t k = m.completed > 4 ? m.completed - 4 : 0; k < m.completed; ++k) {
      if (m.done[(k + 1) % 4].Get(component) < clock) continue;
      if (later.Get(m.component) < k + 1 && (best == nullptr || k < *phase)) {
        best = &m;
        *phase = k;
      }
      break;
    }
  }
  return best;
}

std::string RaceDomain::NotWaitedFor(const std::string& who, const Mbarrier& m, uint64_t phase,
                                     const char* when, const VectorClock& later) const {
  const uint32_t observed = later.Get(m.component);
  return absl::StrCat(
      who, " released ", BarrierName(components_[m.component].bar), " phase ", phase, " ", when,
      ", but the second access's thread did not wait for that phase (",
      observed == 0 ? "it never observed a phase of it"
                    : absl::StrCat("it has observed its phases up to ", observed - 1),
      ")");
}

// The earlier access is a wgmma group's operand read: which release was too early, or which
// phase after its retirement the later access did not wait for.
std::string RaceDomain::MissingRetire(const Hit& hit, const VectorClock& later) const {
  const uint32_t component = RaceComponent(hit.epoch);
  const uint32_t group = RaceClock(hit.epoch);
  const Component& c = components_[component];
  const std::string warpgroup = absl::StrFormat("warpgroup %u", c.index);
  // A phase the later access observed, released by the warpgroup after the read was issued
  // but before the group retired: the release came too early.
  auto issue = mma_issues_.find(hit.epoch);
  if (issue != mma_issues_.end()) {
    for (const auto& [bar, m] : mbarriers_) {
      const uint64_t observed = later.Get(m.component);  // phases 0 .. observed - 1
      for (uint64_t k = m.completed > 4 ? m.completed - 4 : 0; k < m.completed && k < observed;
           ++k) {
        const VectorClock& done = m.done[(k + 1) % 4];
        if (done.Get(RaceComponent(issue->second)) < RaceClock(issue->second) ||
            done.Get(component) >= group) {
          continue;
        }
        return absl::StrFormat(
            "the second access's thread waited for %s phase %u, which %s released before its "
            "wgmma.wait_group retired group %u (the arrival must come after the wait_group "
            "that retires the wgmma reading the memory)",
            BarrierName(bar), k, warpgroup, group);
      }
    }
  }
  uint64_t phase = 0;
  if (const Mbarrier* m = ReleasedPhase(RaceEpoch(component, group), later, &phase); m != nullptr) {
    return NotWaitedFor(
        warpgroup, *m, phase,
        absl::StrCat("after the wgmma.wait_group that retired group ", group).c_str(), later);
  }
  return absl::StrFormat(
      "nothing orders the second access after the wgmma.wait_group that retires group %u "
      "(it is ordered after %s's groups up to %u only): an arrival after that wait_group and "
      "a wait for it would",
      group, warpgroup, later.Get(component));
}

std::string RaceDomain::Where(Fiber& f, Block& owner, int area, uint64_t offset) const {
  if (area != RaceShadow::kGlobalArea) return owner.shadow()->Locate(f, area, offset);
  const SanitizeBuffer* buffer = launch_->BufferNear(offset);
  if (buffer == nullptr) return absl::StrFormat("global address %#x", offset);
  return absl::StrFormat("byte %d of %s", static_cast<int64_t>(offset - buffer->start),
                         buffer->name);
}

void RaceDomain::Report(Fiber& f, Block& owner, int area, uint64_t offset, uint64_t bytes, int kind,
                        const Hit& hit) {
  const bool write = IsWrite(kind);
  const char* label =
      hit.write ? (write ? "data race (write after write)" : "data race (read after write)")
                : "data race (write after read)";
  const VectorClock& later = ThreadOf(f).vc;
  launch_->Record(label, hit.at, f.abi.statement, f.block->linear(), f.abi.linear_tid, [&] {
    const std::string who = ThreadName(f.block->cluster_rank(), f.abi.linear_tid);
    const std::string where = Where(f, owner, area, offset);
    const char* at = RaceStatement(f.abi.statement);
    std::string second;
    switch (kind) {
      case WARPTRACE_HOST_ACCESS_ASYNC_WRITE:
        second = absl::StrCat("the TMA load issued by ", who, " at ", at, " writes ", bytes,
                              " bytes at ", where);
        break;
      case WARPTRACE_HOST_ACCESS_MMA_READ:
        second = absl::StrCat("a wgmma of ", who, " at ", at, " reads its operand at ", where);
        break;
      case WARPTRACE_HOST_ACCESS_BULK_READ:
        second = absl::StrCat("the TMA store issued by ", who, " at ", at, " reads ", bytes,
                              " bytes at ", where);
        break;
      case kCpAsyncWrite:
        second = absl::StrCat("the cp.async issued by ", who, " at ", at, " writes ", bytes,
                              " bytes at ", where);
        break;
      default:
        second = absl::StrCat(who, write ? " writes " : " reads ", bytes, " bytes at ", where,
                              " at ", at);
        break;
    }
    return absl::StrCat(label, ": ", second, "; ", DescribeEarlier(hit),
                        " is not ordered before it: ", Missing(hit, later));
  });
}

void RaceDomain::ReportUnfenced(Fiber& f, Block& owner, int area, uint64_t offset, int kind,
                                const Hit& hit) {
  const char* label = "missing fence.proxy.async";
  launch_->Record(label, hit.at, f.abi.statement, f.block->linear(), f.abi.linear_tid, [&] {
    const Component& writer = components_[RaceComponent(hit.epoch)];
    return absl::StrCat(
        label, ": ", kind == WARPTRACE_HOST_ACCESS_MMA_READ ? "a wgmma of " : "the TMA store of ",
        ThreadName(f.block->cluster_rank(), f.abi.linear_tid), " at ",
        RaceStatement(f.abi.statement), " reads through the async proxy ",
        Where(f, owner, area, offset), ", which ", ThreadName(writer.rank, writer.index),
        " wrote through the generic proxy at ", RaceStatement(hit.at),
        " with no fence.proxy.async after the write: the async proxy may not see it (PTX ISA: "
        "a write through the generic proxy must be fenced with fence.proxy.async before the "
        "async proxy reads it; warptrace_fence_proxy_async() after the writes, then the "
        "barrier)");
  });
}

}  // namespace warptrace::host
