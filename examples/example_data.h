// Deterministic inputs for the examples and their tests.
#ifndef WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_
#define WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_

#include <cstdint>
#include <vector>

namespace warptrace::examples {

// `count` floats uniform in [-1, 1), the same for the same seed on every machine (a 64-bit
// LCG; the top 24 bits of each state make an exact float).
inline std::vector<float> RandomFloats(uint64_t count, uint64_t seed) {
  std::vector<float> out(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& x : out) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(state >> 40) / static_cast<float>(1u << 23) - 1.0f;
  }
  return out;
}

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_
