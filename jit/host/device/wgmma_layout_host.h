// Part of the host backend's wgmma emulation (wgmma_host.h, which includes it where the
// shared-memory window, the descriptors and Fail are defined): the TMA boxes each block's
// loads wrote, and the check of a wgmma operand's descriptor against the box its elements
// come from. Not a header of its own: only wgmma_host.h includes it.
#ifndef WARPTRACE_JIT_HOST_WGMMA_LAYOUT_HOST_H_
#define WARPTRACE_JIT_HOST_WGMMA_LAYOUT_HOST_H_

namespace warptrace_host {
namespace wgmma {

// ---- What the TMA loads wrote, to check descriptors against ----
//
// Every TMA load into shared memory records its box (where, which tensor, which element
// coordinates, which swizzle, which builder path). A wgmma reading an operand element through
// a descriptor from such a box inverts the copy's swizzle to find the tensor element the copy
// put there; over the operand, element (mn, k) must come from tensor element
// (x0 + k, y0 + mn) (K-major) or (x0 + mn, y0 + k) (MN-major), as a sub-tile of the tensor.
// A descriptor whose swizzle, LBO or SBO disagrees with the copy's layout reads the tile
// scrambled (on a GPU too, silently): the launch fails naming both builder paths and both
// layouts. Elements not written by a TMA load (cp.async, plain stores) are not checked.

struct TmaBox {
  const char* begin;
  unsigned long long bytes, row_bytes;  // the box's, and its innermost row's
  unsigned int rank, element_bytes;
  unsigned int swizzle;  // the tensor map's: 0 none, 1 32B, 2 64B, 3 128B (CUtensorMapSwizzle)
  unsigned int box[5];
  int c[5];
  unsigned long long tensor;  // the tensor's global address: which tensor
  const char* site;           // the copy's builder path (or source file), may be null
};

struct BlockBoxes {
  long long launch = 0;
  WarptraceHostDim block{~0u, ~0u, ~0u};
  std::vector<TmaBox> boxes;
};

// The block's boxes (the fibers of a block run on one worker thread; keyed by the block's
// static shared area, reset for a new block or launch).
WARPTRACE_HOST_OWN_FN inline std::vector<TmaBox>& Boxes() {
  static thread_local std::unordered_map<const void*, BlockBoxes> all;
  const WarptraceHostThread& t = Current();
  BlockBoxes& b = all[t.static_shared];
  if (b.launch != t.clock->ns_base || b.block.x != t.block_idx.x || b.block.y != t.block_idx.y ||
      b.block.z != t.block_idx.z) {
    b.boxes.clear();
    b.launch = t.clock->ns_base;
    b.block = t.block_idx;
  }
  return b.boxes;
}

WARPTRACE_HOST_OWN_FN inline void RecordTmaBox(const void* smem, const unsigned int* box,
                                               const int* c, unsigned int rank,
                                               unsigned int element_bytes, unsigned int swizzle,
                                               unsigned long long tensor, const char* site) {
  TmaBox r{};
  r.begin = static_cast<const char*>(smem);
  r.rank = rank;
  r.element_bytes = element_bytes;
  r.swizzle = swizzle;
  r.tensor = tensor;
  r.site = site;
  r.bytes = element_bytes;
  for (unsigned int i = 0; i < rank && i < 5; ++i) {
    r.box[i] = box[i];
    r.c[i] = c[i];
    r.bytes *= box[i];
  }
  r.row_bytes = static_cast<unsigned long long>(box[0]) * element_bytes;
  std::vector<TmaBox>& boxes = Boxes();
  const char* end = r.begin + r.bytes;
  for (size_t i = 0; i < boxes.size();) {
    const TmaBox& o = boxes[i];
    if (o.begin < end && r.begin < o.begin + o.bytes) {
      boxes[i] = boxes.back();
      boxes.pop_back();
    } else {
      ++i;
    }
  }
  boxes.push_back(r);
}

// "128B swizzle" for a tensor map's CUtensorMapSwizzle code.
WARPTRACE_HOST_OWN_FN inline const char* MapSwizzleName(unsigned int swizzle) {
  static const char* const kNames[] = {"no swizzle", "32B swizzle", "64B swizzle",
                                       "128B swizzle"};
  return kNames[swizzle & 3];
}
// The descriptor's WARPTRACE_SWIZZLE_* mode with a tensor map's swizzle.
WARPTRACE_HOST_OWN_FN inline int DescSwizzleOfMap(unsigned int swizzle) {
  return swizzle == 3 ? 1 : swizzle == 2 ? 2 : swizzle == 1 ? 3 : 0;
}

// Operand element (mn, k) and the tensor element (x, y) a TMA box put at its address.
struct TileElement {
  unsigned int mn, k;
  long long x, y;
};

// One thread's view of an operand: the sub-tile origin its elements imply.
struct LayoutCheck {
  int state;  // 0: no element from a TMA box; 1: consistent; 2: two elements disagree
  // The box (a copy: the block's list changes while the warpgroup exchanges its checks).
  TmaBox box;
  long long x0, y0, z;  // the implied origin (and outer coordinate) of the sub-tile
  TileElement first;     // the first element seen
  TileElement bad;       // state 2: the one that disagrees with it
};

// Adds element (mn, k), read at host address `p`, to `check`.
WARPTRACE_HOST_OWN_FN inline void CheckElementLayout(LayoutCheck& check, const char* p,
                                                     unsigned int mn, unsigned int k,
                                                     bool mn_major) {
  if (check.state == 2) return;
  const TmaBox* box = nullptr;
  if (check.state != 0 && p >= check.box.begin && p < check.box.begin + check.box.bytes) {
    box = &check.box;
  } else {
    for (const TmaBox& b : Boxes()) {
      if (p >= b.begin && p < b.begin + b.bytes) box = &b;
    }
  }
  if (box == nullptr || box->element_bytes != 2 || box->rank > 3) return;
  const unsigned long long mask =
      box->swizzle == 3 ? 7 : box->swizzle == 2 ? 3 : box->swizzle == 1 ? 1 : 0;
  const unsigned long long o = static_cast<unsigned long long>(p - box->begin);
  const unsigned long long dense = o ^ (((o >> 7) & mask) << 4);  // its own inverse
  const unsigned long long row = dense / box->row_bytes;
  const long long x = box->c[0] + static_cast<long long>((dense % box->row_bytes) / 2);
  long long y = box->c[1] + static_cast<long long>(row), z = 0;
  if (box->rank == 3) {
    y = box->c[1] + static_cast<long long>(row % box->box[1]);
    z = box->c[2] + static_cast<long long>(row / box->box[1]);
  }
  const long long x0 = x - (mn_major ? mn : k), y0 = y - (mn_major ? k : mn);
  if (check.state == 0) {
    check = LayoutCheck{1, *box, x0, y0, z, TileElement{mn, k, x, y}, TileElement{}};
    return;
  }
  if (x0 != check.x0 || y0 != check.y0 || z != check.z || box->tensor != check.box.tensor) {
    check.state = 2;
    check.box = *box;
    check.bad = TileElement{mn, k, x, y};
  }
}

// Fails for the first thread of the warpgroup whose elements of the operand disagree with
// the others' or among themselves (`checks`: every thread's, from the exchange).
[[noreturn]] inline void FailLayout(const TmaBox& b, const TileElement& first,
                                    const TileElement& bad, unsigned long long raw,
                                    bool mn_major, const char* what, const char* site,
                                    const char* operand) {
  const Desc d = Decode(raw);
  const char* mn_name = operand[0] == 'A' ? "m" : "n";
  char suggestion[256];
  if (!mn_major && b.swizzle != 0) {
    snprintf(suggestion, sizeof suggestion,
             "for this K-major box, WARPTRACE_SWIZZLE_%s and SBO %llu (8 rows of %llu bytes)",
             b.swizzle == 3 ? "128B" : b.swizzle == 2 ? "64B" : "32B", 8 * b.row_bytes,
             b.row_bytes);
  } else {
    snprintf(suggestion, sizeof suggestion,
             "the tensor map's %s, LBO and SBO the distances of the copy's %llu-byte rows",
             MapSwizzleName(b.swizzle), b.row_bytes);
  }
  Fail("%s at %s: the %s operand's descriptor 0x%016llx (%s-major, %s, LBO %llu, SBO %llu) "
       "does not read the tile the way the TMA copy at %s wrote it (box {%u, %u} of %u-byte "
       "elements, %s, rows of %llu bytes): %s element (%s %u, k %u) reads the tensor's element "
       "{%lld, %lld} (innermost first) but element (%s %u, k %u) reads {%lld, %lld}, not a "
       "sub-tile; the result would be wrong on a GPU too. Make the descriptor match the "
       "copy's layout: %s",
       what, site != nullptr ? site : "?", operand, raw, mn_major ? "MN" : "K",
       SwizzleName(d.swizzle), d.lbo, d.sbo, b.site != nullptr ? b.site : "?", b.box[0],
       b.rank > 1 ? b.box[1] : 1u, b.element_bytes, MapSwizzleName(b.swizzle), b.row_bytes,
       operand, mn_name, bad.mn, bad.k, bad.x, bad.y, mn_name, first.mn, first.k, first.x,
       first.y, suggestion);
}

}  // namespace wgmma
}  // namespace warptrace_host

#endif  // WARPTRACE_JIT_HOST_WGMMA_LAYOUT_HOST_H_
