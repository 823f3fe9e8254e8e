// Deflater: a fast zlib-format (RFC 1950 around RFC 1951) compressor for machine-made,
// repetitive bytes such as a Perfetto writer's packet buffers, whose output is a function of
// its input alone.
//
//   Deflater deflater;                                   // reuse it: it keeps its tables
//   std::vector<uint8_t> out(Deflater::Bound(in.size()));
//   out.resize(deflater.Compress(in, out.data()));       // inflates with zlib to `in`
//
// One pass of greedy LZ77 (at each token start two candidates: the previous match's distance
// back, and the last token start whose next 6 bytes hash the same; the longer match is taken
// when at least 4 bytes agree, up to 258, 32 KiB back), then one dynamic-Huffman block (codes from the
// block's own symbol counts, lengths limited to 15 bits by halving the counts until they
// fit) or stored blocks, whichever is smaller. Packets that repeat but for a timestamp cost
// the timestamp's bytes and a match at the distance the last one had.
//
// Why not a library: the bytes of the trace must not depend on where or on which thread they
// were made (--threads=1 and --threads=N write the same file), and one library tried (ISA-L's
// igzip, level 1) deflated the same input differently depending on its stream's address.
// Here everything the output depends on is the input and code in this file: no hidden
// state (the hash table is cleared per call), no floating point, no pointer values, ties
// broken by symbol number. On the packet buffers of the 1e6-event dumps' outputs (Mosaic and
// warptrace format, 13 MB each) it is 1.6x and 3.5x faster than libdeflate's level 1 (used
// before) and 3.4x and 5.2x faster than zlib's, its output 2% and 2.7x smaller than
// libdeflate's (synthetic packets: bazel run -c opt //tests/base:deflate_benchmark).
//
// Thread-safety: one Deflater per thread; Compress is reentrant across Deflaters.
#ifndef WARPTRACE_BASE_DEFLATE_H_
#define WARPTRACE_BASE_DEFLATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"

namespace warptrace {

class Deflater {
 public:
  Deflater();

  // The most bytes Compress writes for `size` input bytes (stored blocks, the zlib header
  // and trailer, and 8 bytes of room for the bit writer).
  static size_t Bound(size_t size);

  // Compresses `in` into `out`, which has room for Bound(in.size()) bytes; returns the
  // zlib stream's size. Inputs of any size (up to 2^32 - 1 bytes) and content.
  size_t Compress(absl::Span<const uint8_t> in, uint8_t* out);

 private:
  std::vector<uint32_t> table_;  // hash -> the position that last started a token there
  // The block's literals and matches (deflate.cc), room for one per input byte; left
  // uninitialized, so only the pages tokens are written to are touched (packets: ~1/20).
  std::unique_ptr<uint32_t[]> tokens_;
  size_t token_capacity_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_DEFLATE_H_
