// Dim3: a CUDA launch extent (grid or block), x fastest. Count() is the number of blocks or
// threads it spans.
//
//   Dim3 grid{8, 8, 1};  // grid.Count() == 64
#ifndef WARPTRACE_BASE_DIM3_H_
#define WARPTRACE_BASE_DIM3_H_

#include <cstdint>

namespace warptrace {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t Count() const { return uint64_t{x} * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_DIM3_H_
