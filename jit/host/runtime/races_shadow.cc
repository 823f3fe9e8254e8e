// The races check's shadow (RaceShadow: pages of cells, read sets and their storage) and
// vector clocks (races.h); the check itself is races.cc.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "jit/host/runtime/races.h"

namespace warptrace::host {

// Barrier and phase joins are most of the races check's time outside accesses: AVX2's
// unsigned 32-bit max where the CPU has it (baseline x86-64 has no pmaxud).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void VectorClock::Join(const VectorClock& o) {
  if (o.v_.size() > v_.size()) v_.resize(o.v_.size(), 0u);
  uint32_t* __restrict a = v_.data();
  const uint32_t* __restrict b = o.v_.data();
  const size_t n = o.v_.size();
  for (size_t i = 0; i < n; ++i) a[i] = a[i] > b[i] ? a[i] : b[i];  // vectorized
}

RaceShadow::RaceShadow(uint64_t dynamic_bytes) {
  pages_[0].resize((WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES + kPageBytes - 1) / kPageBytes);
  pages_[1].resize((dynamic_bytes + kPageBytes - 1) / kPageBytes);
}

namespace {
// The read sets' storage that blocks this worker thread checked left behind, at most
// kMaxSpareSets of them (8 MiB at 16 entries each).
constexpr size_t kMaxSpareSets = 16384;
std::vector<std::vector<RaceShadow::Read>>& SpareSets() {
  thread_local std::vector<std::vector<RaceShadow::Read>> spares;
  return spares;
}
}  // namespace

RaceShadow::~RaceShadow() {
  std::vector<std::vector<Read>>& spares = SpareSets();
  for (std::vector<Read>& set : sets_) {
    if (spares.size() == kMaxSpareSets) break;
    set.clear();
    spares.push_back(std::move(set));
  }
}

uint64_t RaceShadow::AddSet() {
  std::vector<std::vector<Read>>& spares = SpareSets();
  if (!spares.empty()) {
    sets_.push_back(std::move(spares.back()));
    spares.pop_back();
  } else {
    sets_.emplace_back().reserve(16);  // a warp's or half-warp's readers without regrowing
  }
  holders_.push_back(1);
  return sets_.size() - 1;
}

uint64_t RaceShadow::Copy(uint64_t index, RaceCell* w, uint32_t n, uint32_t words,
                          uint32_t step) {
  const uint64_t copy = NewSet();
  sets_[copy] = sets_[index];
  holders_[copy] = words;
  holders_[index] -= words;
  for (uint32_t i = 0; i < words; ++i) {
    for (uint32_t k = 0; k < n; ++k) w[size_t{i} * step + k].read = kReadSetBit | copy;
  }
  return copy;
}

void RaceShadow::Unfold(std::vector<Read>& reads) {
  size_t n = 0;
  for (const Read& r : reads) n += r.span + 1;
  if (n == reads.size()) return;
  std::vector<Read> one;
  one.reserve(n);
  for (const Read& r : reads) {
    for (uint32_t k = 0; k <= r.span; ++k) one.push_back({r.Epoch(k), r.at, r.mask});
  }
  std::stable_sort(one.begin(), one.end(), [](const Read& a, const Read& b) {
    return RaceComponent(a.epoch) < RaceComponent(b.epoch);
  });
  reads.swap(one);
}

RaceCell* RaceShadow::Split(RaceCell& word) {
  if ((word.read & kReadSetBit) != 0) {  // a word cell's reads (mask 1) read every byte
    for (Read& r : sets_[Own(&word, 1)]) {
      r.mask = 0xF;
      r.next = 0;  // extended only as a word cell's reads
    }
  }
  split_.push_back({word, word, word, word});
  word.read = kSplitBit | (split_.size() - 1);
  word.write = 0;
  return split_.back().data();
}

void RaceShadow::Exempt(int area, uint64_t offset, uint64_t bytes) {
  const uint64_t size = pages_[area].size() * kPageBytes;
  for (uint64_t byte = offset; byte < offset + bytes && byte < size;) {
    const uint64_t word = byte & ~uint64_t{3};
    const uint64_t end = std::min(word + 4, offset + bytes);
    RaceCell& w = Word(area, word);
    if (end - byte == 4) {
      w.write = kExempt;
    } else {
      RaceCell* cells = IsSplit(w) ? Bytes(w) : Split(w);
      for (uint64_t b = byte; b < end; ++b) cells[b - word].write = kExempt;
    }
    byte = end;
  }
}

}  // namespace warptrace::host
