#include "jit/host/runtime/global_races.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/host/runtime/sanitizer.h"

namespace warptrace::host {
namespace {

bool Alike(const GlobalRun& a, const GlobalRun& b) {
  return a.write == b.write && a.released == b.released && a.acquired == b.acquired &&
         a.at == b.at;
}

// Whether a fence-and-atomic protocol may order one run before the other.
bool MayBeOrdered(const GlobalRun& a, const GlobalRun& b) {
  return (a.released && b.acquired) || (b.released && a.acquired);
}

// "bytes 0-63 of argument `C` (float*)".
std::string Bytes(const LaunchSanitizer& launch, uintptr_t start, uintptr_t end) {
  const SanitizeBuffer* buffer = launch.BufferNear(start);
  if (buffer == nullptr) return absl::StrFormat("global bytes %#x-%#x", start, end - 1);
  const uintptr_t lo = start - buffer->start;
  const uintptr_t hi = end - 1 - buffer->start;
  return lo == hi ? absl::StrFormat("byte %u of %s", lo, buffer->name)
                  : absl::StrFormat("bytes %u-%u of %s", lo, hi, buffer->name);
}

void Report(LaunchSanitizer& launch, const GlobalRun& earlier, const GlobalRun& later) {
  // The example names the later run in address order's block (the lowest block and thread
  // are kept per pair of statements by Record).
  const char* label = earlier.write && later.write ? "data race between blocks (two writes)"
                                                   : "data race between blocks (a write and "
                                                     "a read)";
  const uintptr_t start = std::max(earlier.start, later.start);
  const uintptr_t end = std::min(earlier.end, later.end);
  launch.Record(label, earlier.at, later.at, later.block, later.thread, [&] {
    return absl::StrCat(
        label, ": ", later.who, later.write ? " writes " : " reads ",
        Bytes(launch, start, end), " at ", RaceStatement(later.at), "; ", earlier.who,
        earlier.write ? " writes " : " reads ", "them at ", RaceStatement(earlier.at),
        ", and nothing orders the two blocks' accesses: the blocks of a launch run in no set "
        "order, and only a fence-and-atomic protocol orders one block's global accesses "
        "before another's (the writer's __threadfence() and then an atomic flag, which the "
        "other block reads with an atomic before its access)",
        earlier.released || later.released || earlier.acquired || later.acquired
            ? " (these blocks use fences or atomics, but none comes after the first access "
              "and before the second)"
            : "");
  });
}

}  // namespace

std::vector<GlobalRun> CoalesceGlobalRuns(std::vector<GlobalRun> runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const GlobalRun& a, const GlobalRun& b) {
    return std::tie(a.start, a.write) < std::tie(b.start, b.write);
  });
  std::vector<GlobalRun> out;
  for (GlobalRun& r : runs) {
    // Merge into the latest alike run that reaches it (scanning back over the few runs of
    // other kinds that start inside it).
    bool merged = false;
    for (size_t i = out.size(); i-- > 0 && out[i].end >= r.start;) {
      if (!Alike(out[i], r)) continue;
      out[i].end = std::max(out[i].end, r.end);
      merged = true;
      break;
    }
    if (!merged) out.push_back(std::move(r));
  }
  return out;
}

void GlobalRaceLog::Check(LaunchSanitizer& launch) {
  absl::MutexLock lock(&mu_);
  std::sort(runs_.begin(), runs_.end(), [](const GlobalRun& a, const GlobalRun& b) {
    return std::tie(a.start, a.domain, a.write, a.end) <
           std::tie(b.start, b.domain, b.write, b.end);
  });
  // A sweep in address order: each run against the earlier runs still open at its start
  // (writes against everything open, reads against open writes).
  std::vector<const GlobalRun*> writes;
  std::vector<const GlobalRun*> reads;
  auto prune = [](std::vector<const GlobalRun*>& open, uintptr_t at) {
    open.erase(std::remove_if(open.begin(), open.end(),
                              [at](const GlobalRun* r) { return r->end <= at; }),
               open.end());
  };
  for (const GlobalRun& r : runs_) {
    prune(writes, r.start);
    prune(reads, r.start);
    auto against = [&](const std::vector<const GlobalRun*>& open) {
      for (const GlobalRun* o : open) {
        if (o->domain != r.domain && !MayBeOrdered(*o, r)) Report(launch, *o, r);
      }
    };
    against(writes);
    if (r.write) against(reads);
    (r.write ? writes : reads).push_back(&r);
  }
  runs_.clear();
}

}  // namespace warptrace::host
