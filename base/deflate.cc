#include "base/deflate.h"

#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace warptrace {
namespace {

constexpr int kHashBits = 14;
constexpr uint32_t kMinMatch = 4;
constexpr uint32_t kMaxMatch = 258;
constexpr uint32_t kWindow = 32768;
constexpr size_t kStoredMax = 65535;  // bytes in one stored block
constexpr int kLitLenSymbols = 286;   // 0-255 literals, 256 end of block, 257-285 lengths
constexpr int kDistSymbols = 30;
constexpr int kCodeLenSymbols = 19;
constexpr int kEndOfBlock = 256;
constexpr int kMaxBits = 15;          // litlen and distance codes
constexpr int kMaxCodeLenBits = 7;    // the code-length code

// A token of the block: a literal byte (bit 31 clear), or a match, bit 31 | distance symbol
// << 23 | (length - 3) << 15 | (distance - 1).
constexpr uint32_t kMatchBit = 1u << 31;

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// RFC 1951 3.2.5: per length 3..258 its symbol and extra bits; per distance its symbol
// (distance - 1 below 256 directly, above by its bits 7 and up) and extra bits.
struct Tables {
  std::array<uint16_t, 256> length_symbol;
  std::array<uint8_t, 256> length_extra_bits;
  std::array<uint8_t, 256> length_extra;  // the length less its symbol's base
  std::array<uint8_t, 512> dist_symbol;
  std::array<uint16_t, kDistSymbols> dist_base;
  std::array<uint8_t, kDistSymbols> dist_extra_bits;

  Tables() {
    static constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10,  11,  13,
                                                 15, 17, 19, 23, 27, 31, 35, 43,  51,  59,
                                                 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr uint8_t kLengthBits[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int s = 0; s < 29; ++s) {
      const int end = s == 28 ? 259 : kLengthBase[s + 1];
      for (int len = kLengthBase[s]; len < end; ++len) {
        length_symbol[len - 3] = static_cast<uint16_t>(257 + s);
        length_extra_bits[len - 3] = kLengthBits[s];
        length_extra[len - 3] = static_cast<uint8_t>(len - kLengthBase[s]);
      }
    }
    // 258 has a symbol of its own (285), not 284's top extra value.
    length_symbol[255] = 285;
    length_extra_bits[255] = 0;
    length_extra[255] = 0;
    static constexpr uint16_t kDistBase[kDistSymbols] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    for (int s = 0; s < kDistSymbols; ++s) {
      dist_base[s] = kDistBase[s];
      dist_extra_bits[s] = static_cast<uint8_t>(s < 4 ? 0 : s / 2 - 1);
      const uint32_t end = s + 1 < kDistSymbols ? kDistBase[s + 1] : kWindow + 1;
      for (uint32_t d = kDistBase[s] - 1; d < end - 1; ++d) {
        if (d < 256) {
          dist_symbol[d] = static_cast<uint8_t>(s);
        } else {
          dist_symbol[256 + (d >> 7)] = static_cast<uint8_t>(s);
        }
      }
    }
  }
  uint32_t DistSymbol(uint32_t dist_minus_1) const {
    return dist_minus_1 < 256 ? dist_symbol[dist_minus_1] : dist_symbol[256 + (dist_minus_1 >> 7)];
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

// Code lengths for `n` symbols of counts `count` (at least two of them non-zero), none over
// `max_bits`: Huffman's, built over the symbols sorted by (count, symbol); while the longest
// is too long, the counts are halved (rounding up: the order stays sorted) and the code
// built again.
void HuffmanLengths(const uint32_t* count, int n, int max_bits, uint8_t* lens) {
  // Sorted as count << 9 | symbol (symbols < 512).
  std::array<uint64_t, kLitLenSymbols> keys{};
  std::array<uint64_t, 2 * kLitLenSymbols> weight{};
  std::array<uint16_t, 2 * kLitLenSymbols> parent{};
  std::array<uint8_t, 2 * kLitLenSymbols> depth{};
  int m = 0;
  for (int i = 0; i < n; ++i) {
    lens[i] = 0;
    if (count[i] != 0) keys[m++] = uint64_t{count[i]} << 9 | static_cast<uint64_t>(i);
  }
  std::sort(keys.begin(), keys.begin() + m);
  for (int k = 0; k < m; ++k) weight[k] = keys[k] >> 9;
  for (;;) {
    // Two queues: the leaves in order, and the internal nodes, made in order of weight.
    int leaf = 0, inner = m;
    auto take = [&](int next) {
      if (leaf < m && (inner >= next || weight[leaf] <= weight[inner])) return leaf++;
      return inner++;
    };
    for (int next = m; next < 2 * m - 1; ++next) {
      const int a = take(next);
      const int b = take(next);
      weight[next] = weight[a] + weight[b];
      parent[a] = parent[b] = static_cast<uint16_t>(next);
    }
    depth[2 * m - 2] = 0;
    int longest = 0;
    for (int i = 2 * m - 3; i >= 0; --i) {
      depth[i] = static_cast<uint8_t>(depth[parent[i]] + 1);
      if (i < m) longest = std::max<int>(longest, depth[i]);
    }
    if (longest <= max_bits) {
      for (int k = 0; k < m; ++k) lens[keys[k] & 511] = depth[k];
      return;
    }
    for (int k = 0; k < m; ++k) weight[k] = (weight[k] + 1) / 2;
  }
}

// At least two symbols counted (a one-symbol code is not complete): the lowest unused ones.
void AtLeastTwo(uint32_t* count, int n) {
  int used = 0;
  for (int i = 0; i < n; ++i) used += count[i] != 0;
  for (int i = 0; used < 2 && i < n; ++i) {
    if (count[i] == 0) {
      count[i] = 1;
      ++used;
    }
  }
}

uint32_t Reverse(uint32_t code, int bits) {
  uint32_t r = 0;
  for (int i = 0; i < bits; ++i, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

// Canonical codes (RFC 1951 3.2.2), bit-reversed for the LSB-first writer.
void CanonicalCodes(const uint8_t* lens, int n, uint16_t* codes) {
  std::array<uint32_t, kMaxBits + 2> bl_count{};
  std::array<uint32_t, kMaxBits + 2> next{};
  for (int i = 0; i < n; ++i) ++bl_count[lens[i]];
  bl_count[0] = 0;
  uint32_t code = 0;
  for (int bits = 1; bits <= kMaxBits; ++bits) {
    code = (code + bl_count[bits - 1]) << 1;
    next[bits] = code;
  }
  for (int i = 0; i < n; ++i) {
    codes[i] = lens[i] == 0 ? 0 : static_cast<uint16_t>(Reverse(next[lens[i]]++, lens[i]));
  }
}

// Bits, least significant first, into bytes; each Flush stores 8 bytes (Bound's room).
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out) {}
  void Put(uint64_t bits, int n) {
    buf_ |= bits << count_;
    count_ += n;
  }
  // Call with at most 56 bits pending.
  void Flush() {
    std::memcpy(out_, &buf_, 8);
    const int bytes = count_ >> 3;
    out_ += bytes;
    buf_ = bytes == 8 ? 0 : buf_ >> (8 * bytes);
    count_ &= 7;
  }
  // To the next byte boundary; returns where the bytes end.
  uint8_t* Align() {
    Flush();
    if (count_ > 0) ++out_;
    buf_ = 0;
    count_ = 0;
    return out_;
  }
  void Skip(size_t bytes) { out_ += bytes; }  // after Align: bytes written directly

 private:
  uint8_t* out_;
  uint64_t buf_ = 0;
  int count_ = 0;
};

// The order code-length code lengths are sent in (RFC 1951 3.2.7).
constexpr uint8_t kCodeLenOrder[kCodeLenSymbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                    11, 4,  12, 3, 13, 2, 14, 1, 15};

// The litlen and distance code lengths, run-length coded: (symbol, extra value) pairs.
struct CodeLenRun {
  uint8_t symbol;
  uint8_t extra;
};
constexpr uint8_t kCodeLenExtraBits[kCodeLenSymbols] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                        0, 0, 0, 0, 0, 0, 2, 3, 7};

int RunLengths(const uint8_t* lens, int n, CodeLenRun* out) {
  int k = 0;
  for (int i = 0; i < n;) {
    const uint8_t len = lens[i];
    int run = 1;
    while (i + run < n && lens[i + run] == len) ++run;
    i += run;
    if (len == 0) {
      while (run >= 11) {
        const int r = std::min(run, 138);
        out[k++] = {18, static_cast<uint8_t>(r - 11)};
        run -= r;
      }
      if (run >= 3) {
        out[k++] = {17, static_cast<uint8_t>(run - 3)};
        run = 0;
      }
    } else {
      out[k++] = {len, 0};
      --run;
      while (run >= 3) {
        const int r = std::min(run, 6);
        out[k++] = {16, static_cast<uint8_t>(r - 3)};
        run -= r;
      }
    }
    for (; run > 0; --run) out[k++] = {len, 0};
  }
  return k;
}

// What the LZ77 pass counted: the litlen and distance symbols, and the extra bits.
struct SymbolCounts {
  std::array<uint32_t, kLitLenSymbols> lit{};
  std::array<uint32_t, kDistSymbols> dist{};
  uint64_t extra_bits = 0;
};

// How many bytes at `pos` match those at the earlier `c` (at least kMinMatch, at most 258),
// or 0 when `c` is not a match (too far back, or its first 4 bytes differ from `first4`).
size_t MatchLength(const uint8_t* s, size_t n, size_t pos, size_t c, uint32_t first4) {
  const size_t dist = pos - c;
  if (dist - 1 >= kWindow || Load32(s + c) != first4) return 0;
  const size_t max = std::min<size_t>(kMaxMatch, n - pos);
  size_t len = kMinMatch;
  while (len + 8 <= max) {
    const uint64_t x = Load64(s + c + len) ^ Load64(s + pos + len);
    if (x != 0) return len + (static_cast<size_t>(__builtin_ctzll(x)) >> 3);
    len += 8;
  }
  while (len < max && s[c + len] == s[pos + len]) ++len;
  return len;
}

// LZ77, greedy, into `tokens` (room for one per input byte): at each token start, the
// previous match's distance back (packets of the same shapes repeat at the same distance)
// and the last token start with the same next 6 bytes (`table`, cleared); the longer match
// wins, the distance back on a tie. (Two hashed positions per bucket were tried: 6% smaller
// on Mosaic-format packets and 20-40% slower; not taken, speed first.) Returns the token
// count.
size_t Lz77(absl::Span<const uint8_t> in, uint32_t* table, uint32_t* tokens,
            SymbolCounts& counts) {
  const Tables& t = GetTables();
  const uint8_t* s = in.data();
  const size_t n = in.size();
  uint32_t* token = tokens;
  size_t pos = 0;
  size_t last_dist = 0;  // 0: no match yet
  if (n >= 16) {
    const size_t limit = n - 8;
    while (pos < limit) {
      const uint64_t v = Load64(s + pos);
      const uint32_t h =
          static_cast<uint32_t>(((v << 16) * 0x9E3779B97F4A7C15ull) >> (64 - kHashBits));
      // An empty slot names position 0: a real earlier position, or (at 0) no distance.
      const size_t hashed = table[h];
      table[h] = static_cast<uint32_t>(pos);
      const uint32_t first4 = static_cast<uint32_t>(v);
      size_t len = last_dist != 0 ? MatchLength(s, n, pos, pos - last_dist, first4) : 0;
      size_t dist = last_dist;
      if (hashed != pos - last_dist) {
        const size_t other = MatchLength(s, n, pos, hashed, first4);
        if (other > len) {
          len = other;
          dist = pos - hashed;
        }
      }
      if (len != 0) {
        last_dist = dist;
        const uint32_t l3 = static_cast<uint32_t>(len - 3);
        const uint32_t d1 = static_cast<uint32_t>(dist - 1);
        const uint32_t ds = t.DistSymbol(d1);
        *token++ = kMatchBit | ds << 23 | l3 << 15 | d1;
        ++counts.lit[t.length_symbol[l3]];
        ++counts.dist[ds];
        counts.extra_bits += t.length_extra_bits[l3] + t.dist_extra_bits[ds];
        pos += len;
        continue;
      }
      const uint8_t literal = static_cast<uint8_t>(v);
      *token++ = literal;
      ++counts.lit[literal];
      ++pos;
    }
  }
  for (; pos < n; ++pos) {
    *token++ = s[pos];
    ++counts.lit[s[pos]];
  }
  return static_cast<size_t>(token - tokens);
}

// A dynamic block's codes (RFC 1951 3.2.7): the litlen and distance code lengths, how many
// of each are sent (hlit, hdist), their run-length coding, and its code (hclen sent).
struct BlockCodes {
  std::array<uint8_t, kLitLenSymbols> lit_lens{};
  std::array<uint8_t, kDistSymbols> dist_lens{};
  int hlit = 0, hdist = 0, hclen = 0;
  std::array<CodeLenRun, kLitLenSymbols + kDistSymbols> runs{};
  int num_runs = 0;
  std::array<uint8_t, kCodeLenSymbols> cl_lens{};
};

// The codes for `counts` (the end of block counted in, at least two symbols per code), and
// the block's size in bits.
BlockCodes MakeCodes(SymbolCounts& counts, uint64_t& bits) {
  BlockCodes c;
  counts.lit[kEndOfBlock] = 1;
  AtLeastTwo(counts.lit.data(), kLitLenSymbols);
  AtLeastTwo(counts.dist.data(), kDistSymbols);
  HuffmanLengths(counts.lit.data(), kLitLenSymbols, kMaxBits, c.lit_lens.data());
  HuffmanLengths(counts.dist.data(), kDistSymbols, kMaxBits, c.dist_lens.data());
  c.hlit = kLitLenSymbols;
  while (c.hlit > 257 && c.lit_lens[c.hlit - 1] == 0) --c.hlit;
  c.hdist = kDistSymbols;
  while (c.hdist > 1 && c.dist_lens[c.hdist - 1] == 0) --c.hdist;
  // The lengths sent: litlen's hlit, then distance's hdist, as one sequence.
  std::array<uint8_t, kLitLenSymbols + kDistSymbols> sent{};
  std::copy(c.lit_lens.begin(), c.lit_lens.begin() + c.hlit, sent.begin());
  std::copy(c.dist_lens.begin(), c.dist_lens.begin() + c.hdist, sent.begin() + c.hlit);
  c.num_runs = RunLengths(sent.data(), c.hlit + c.hdist, c.runs.data());
  std::array<uint32_t, kCodeLenSymbols> cl_count{};
  for (int i = 0; i < c.num_runs; ++i) ++cl_count[c.runs[i].symbol];
  AtLeastTwo(cl_count.data(), kCodeLenSymbols);
  HuffmanLengths(cl_count.data(), kCodeLenSymbols, kMaxCodeLenBits, c.cl_lens.data());
  c.hclen = kCodeLenSymbols;
  while (c.hclen > 4 && c.cl_lens[kCodeLenOrder[c.hclen - 1]] == 0) --c.hclen;

  bits = 3 + 5 + 5 + 4 + 3 * static_cast<uint64_t>(c.hclen) + counts.extra_bits;
  for (int i = 0; i < c.num_runs; ++i) {
    bits += c.cl_lens[c.runs[i].symbol] + kCodeLenExtraBits[c.runs[i].symbol];
  }
  for (int i = 0; i < kLitLenSymbols; ++i) bits += uint64_t{counts.lit[i]} * c.lit_lens[i];
  for (int i = 0; i < kDistSymbols; ++i) bits += uint64_t{counts.dist[i]} * c.dist_lens[i];
  return c;
}

size_t StoredBlocks(size_t size) {
  return std::max<size_t>(1, (size + kStoredMax - 1) / kStoredMax);
}

// `in` as stored blocks, the last one final; returns where the bytes end.
uint8_t* WriteStored(absl::Span<const uint8_t> in, BitWriter& w) {
  const size_t blocks = StoredBlocks(in.size());
  size_t done = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const size_t size = std::min(kStoredMax, in.size() - done);
    w.Put(b + 1 == blocks ? 1 : 0, 1);
    w.Put(0, 2);
    uint8_t* p = w.Align();
    const uint16_t len = static_cast<uint16_t>(size);
    const uint16_t nlen = static_cast<uint16_t>(~len);
    p[0] = static_cast<uint8_t>(len);
    p[1] = static_cast<uint8_t>(len >> 8);
    p[2] = static_cast<uint8_t>(nlen);
    p[3] = static_cast<uint8_t>(nlen >> 8);
    if (size > 0) std::memcpy(p + 4, in.data() + done, size);
    w.Skip(4 + size);
    done += size;
  }
  return w.Align();
}

// `tokens` as one final dynamic-Huffman block with codes `c`; returns where the bytes end.
uint8_t* WriteDynamic(const BlockCodes& c, absl::Span<const uint32_t> tokens, BitWriter& w) {
  const Tables& t = GetTables();
  std::array<uint16_t, kLitLenSymbols> lit_codes{};
  std::array<uint16_t, kDistSymbols> dist_codes{};
  std::array<uint16_t, kCodeLenSymbols> cl_codes{};
  CanonicalCodes(c.lit_lens.data(), kLitLenSymbols, lit_codes.data());
  CanonicalCodes(c.dist_lens.data(), kDistSymbols, dist_codes.data());
  CanonicalCodes(c.cl_lens.data(), kCodeLenSymbols, cl_codes.data());
  w.Put(1, 1);  // final
  w.Put(2, 2);  // dynamic Huffman
  w.Put(static_cast<uint64_t>(c.hlit - 257), 5);
  w.Put(static_cast<uint64_t>(c.hdist - 1), 5);
  w.Put(static_cast<uint64_t>(c.hclen - 4), 4);
  w.Flush();
  for (int i = 0; i < c.hclen; ++i) {
    w.Put(c.cl_lens[kCodeLenOrder[i]], 3);
    w.Flush();
  }
  for (int i = 0; i < c.num_runs; ++i) {
    const CodeLenRun r = c.runs[i];
    w.Put(cl_codes[r.symbol], c.cl_lens[r.symbol]);
    w.Put(r.extra, kCodeLenExtraBits[r.symbol]);
    w.Flush();
  }
  // Per block: each literal's code, and each length's code with its extra bits, as
  // bits | count << 24.
  const uint8_t* lit_lens = c.lit_lens.data();
  const uint8_t* dist_lens = c.dist_lens.data();
  std::array<uint32_t, 256> literal{};
  for (int i = 0; i < 256; ++i) literal[i] = lit_codes[i] | uint32_t{lit_lens[i]} << 24;
  std::array<uint32_t, 256> length{};
  for (int l3 = 0; l3 < 256; ++l3) {
    const uint32_t ls = t.length_symbol[l3];
    length[l3] = (lit_codes[ls] | uint32_t{t.length_extra[l3]} << lit_lens[ls]) |
                 static_cast<uint32_t>(lit_lens[ls] + t.length_extra_bits[l3]) << 24;
  }
  for (const uint32_t tok : tokens) {
    if ((tok & kMatchBit) == 0) {
      w.Put(literal[tok] & 0xffffff, static_cast<int>(literal[tok] >> 24));
    } else {
      const uint32_t len = length[(tok >> 15) & 0xff];
      w.Put(len & 0xffffff, static_cast<int>(len >> 24));
      const uint32_t d1 = tok & 0x7fff;
      const uint32_t ds = (tok >> 23) & 0x1f;
      w.Put(dist_codes[ds] | uint64_t{d1 + 1 - t.dist_base[ds]} << dist_lens[ds],
            dist_lens[ds] + t.dist_extra_bits[ds]);
    }
    w.Flush();
  }
  w.Put(lit_codes[kEndOfBlock], lit_lens[kEndOfBlock]);
  return w.Align();
}

}  // namespace

Deflater::Deflater() : table_(size_t{1} << kHashBits) {}

size_t Deflater::Bound(size_t size) { return 2 + size + 5 * StoredBlocks(size) + 4 + 8; }

size_t Deflater::Compress(absl::Span<const uint8_t> in, uint8_t* out) {
  const size_t n = in.size();
  if (token_capacity_ < n) {
    tokens_.reset(new uint32_t[n]);  // NOLINT: uninitialized on purpose
    token_capacity_ = n;
  }
  std::fill(table_.begin(), table_.end(), 0);
  SymbolCounts counts;
  const size_t num_tokens = Lz77(in, table_.data(), tokens_.get(), counts);
  uint64_t bits = 0;
  const BlockCodes codes = MakeCodes(counts, bits);

  out[0] = 0x78;  // deflate, 32 KiB window
  out[1] = 0x01;  // fastest, no dictionary; (0x78 << 8 | 0x01) % 31 == 0
  BitWriter w(out + 2);
  // Dynamic or stored, whichever is smaller.
  uint8_t* const end = (bits + 7) / 8 >= n + 5 * StoredBlocks(n)
                           ? WriteStored(in, w)
                           : WriteDynamic(codes, absl::MakeConstSpan(tokens_.get(), num_tokens), w);
  const uint32_t adler = libdeflate_adler32(1, in.data(), n);
  end[0] = static_cast<uint8_t>(adler >> 24);
  end[1] = static_cast<uint8_t>(adler >> 16);
  end[2] = static_cast<uint8_t>(adler >> 8);
  end[3] = static_cast<uint8_t>(adler);
  return static_cast<size_t>(end + 4 - out);
}

}  // namespace warptrace
