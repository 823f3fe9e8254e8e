// Deterministic inputs for the examples and their tests.
#ifndef WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_
#define WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_

#include <algorithm>
#include <cstdint>
#include <string>
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

// The CPU reference of an M x N x K GEMM checks every row while it costs at most this many
// multiply-adds (1024^3: about a second); beyond that (4096^3, the GPU sizes of the bundle's
// big-kernel runs) it checks a sample of rows, so that the check stays seconds, not minutes.
inline constexpr uint64_t kFullCheckMacs = uint64_t{1} << 30;

// The rows of C whose reference the check computes, ascending: all of 0..m-1 within
// kFullCheckMacs; else kFullCheckMacs / (N K) rows (at least 1), one per band of
// m / count consecutive rows, at offset (37 j) mod band in band j, so that every tile row
// block is sampled and, across bands, every offset within a band is.
inline std::vector<uint32_t> CheckedRows(uint32_t m, uint32_t n, uint32_t k) {
  std::vector<uint32_t> rows;
  const uint64_t per_row = uint64_t{n} * k;
  const uint64_t count =
      per_row == 0 ? m : std::min<uint64_t>(m, std::max<uint64_t>(1, kFullCheckMacs / per_row));
  if (count >= m) {
    for (uint32_t i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  const uint64_t band = m / count;
  for (uint64_t j = 0; j < count; ++j) {
    rows.push_back(static_cast<uint32_t>(j * band + (j * 37) % band));
  }
  return rows;
}

// "" when `rows` is every one of the `m` rows, else " (the reference of 64 sampled rows of
// 4096: it costs more than 2^30 multiply-adds in all)".
inline std::string CheckedRowsNote(const std::vector<uint32_t>& rows, uint32_t m) {
  if (rows.size() == m) return "";
  return " (the reference of " + std::to_string(rows.size()) + " sampled rows of " +
         std::to_string(m) + ": it costs more than 2^30 multiply-adds in all)";
}

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_EXAMPLE_DATA_H_
