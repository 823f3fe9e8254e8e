// Deflater (base/deflate.h) under libFuzzer: every input is compressed twice (the second time
// by the same Deflater, after the first), both streams must be the same bytes, fit
// Deflater::Bound, and inflate with zlib to the input. A broken invariant traps.
//
//   mkdir -p /tmp/deflate_fuzz
//   bazel run --config=fuzz //tests/fuzz:deflate_fuzzer -- -jobs=1 -max_total_time=600
//       -max_len=300000 /tmp/deflate_fuzz
//   bazel run //tests/fuzz:deflate_fuzzer -- $PWD/crash-1234   (replay, any build)
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/deflate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static warptrace::Deflater deflater;
  const absl::Span<const uint8_t> in(data, size);
  const size_t bound = warptrace::Deflater::Bound(size);
  std::vector<uint8_t> first(bound), second(bound);
  const size_t a = deflater.Compress(in, first.data());
  const size_t b = deflater.Compress(in, second.data());
  if (a > bound || a != b || std::memcmp(first.data(), second.data(), a) != 0) __builtin_trap();
  std::vector<uint8_t> back(size + 1);
  uLongf back_size = back.size();
  if (uncompress(back.data(), &back_size, first.data(), a) != Z_OK) __builtin_trap();
  if (back_size != size || (size > 0 && std::memcmp(back.data(), data, size) != 0)) {
    __builtin_trap();
  }
  return 0;
}
