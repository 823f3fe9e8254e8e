// Hand-built Mosaic GPU buffers for tests (the words JAX Mosaic GPU's profiler writes;
// profiler/imports/mosaic_import.h describes them).
//
//   MosaicTrace t{.start_lo = 1000, .smid = 5, .events = {{0, 100}, {0 | (1u << 31), 160}}};
//   std::vector<uint32_t> words = MosaicWords({t, MosaicTrace{}}, /*e=*/3 + 2 * 2);
#ifndef WARPTRACE_TESTS_PROFILER_IMPORTS_MOSAIC_BUFFER_FIXTURE_H_
#define WARPTRACE_TESTS_PROFILER_IMPORTS_MOSAIC_BUFFER_FIXTURE_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace warptrace {
namespace testing {

// One Mosaic trace as the device writes it: header words + (tag, clock) pairs, zero-padded
// to E words. `used` overrides traces_used (for overflow: more words than fit).
struct MosaicTrace {
  uint32_t start_lo = 0;
  uint32_t smid = 0;
  std::vector<std::pair<uint32_t, uint32_t>> events;  // (tag, clock)
  int64_t used = -1;  // traces_used; -1: 2 * events.size()
};

// The buffer of `traces` in Mosaic's order (block index x-major, then trace), E words each;
// events past E are left out.
inline std::vector<uint32_t> MosaicWords(const std::vector<MosaicTrace>& traces, uint32_t e) {
  std::vector<uint32_t> words;
  for (const MosaicTrace& t : traces) {
    std::vector<uint32_t> w(e, 0u);
    w[0] = t.start_lo;
    w[1] = t.smid;
    w[2] = t.used >= 0 ? static_cast<uint32_t>(t.used) : 2 * t.events.size();
    for (size_t i = 0; i < t.events.size() && 3 + 2 * i + 1 < e; ++i) {
      w[3 + 2 * i] = t.events[i].first;
      w[3 + 2 * i + 1] = t.events[i].second;
    }
    words.insert(words.end(), w.begin(), w.end());
  }
  return words;
}

}  // namespace testing
}  // namespace warptrace

#endif  // WARPTRACE_TESTS_PROFILER_IMPORTS_MOSAIC_BUFFER_FIXTURE_H_
