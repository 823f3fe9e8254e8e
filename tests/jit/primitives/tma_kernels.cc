#include "tests/jit/primitives/tma_kernels.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace::testing {
namespace {

// The shared box (1024-byte aligned, with 1024 bytes to spare for misaligned offsets) and
// the mbarrier, initialized by thread 0 and made visible to the async proxy.
void DeclareBoxAndBarrier(KernelBuilder& b) {
  b.Stmt(absl::StrCat("__shared__ __align__(1024) unsigned char box[", kTmaMaxBoxBytes + 1024,
                      "];"));
  b.Stmt("__shared__ unsigned long long full;");
  b.Stmt(
      "if (threadIdx.x == 0) { warptrace_mbarrier_init(&full, 1); "
      "warptrace_fence_mbarrier_init(); }");
  b.Stmt("__syncthreads();");
}

}  // namespace

absl::StatusOr<Kernel> TmaLoad2dKernel(uint32_t threads) {
  KernelBuilder b("tma_load_2d");
  b.Param("CUtensorMap", "tm")
      .Param("unsigned char*", "out")
      .Param("int", "c0")
      .Param("int", "c1")
      .Param("unsigned int", "expect")
      .Param("unsigned int", "offset")
      .Param("unsigned int", "bytes")
      .Grid({1, 1, 1})
      .Block({threads, 1, 1});
  DeclareBoxAndBarrier(b);
  b.Region("load", [&] {
    b.Stmt(
        "if (threadIdx.x == 0) { warptrace_prefetch_tensormap(&tm); "
        "warptrace_mbarrier_arrive_expect_tx(&full, expect); "
        "warptrace_tma_load_2d(box + offset, &tm, c0, c1, &full); }");
    b.Stmt("warptrace_mbarrier_wait_parity(&full, 0);");
  });
  b.Stmt("for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = box[offset + i];");
  return b.Build();
}

absl::StatusOr<Kernel> TmaLoad3dKernel(uint32_t threads) {
  KernelBuilder b("tma_load_3d");
  b.Param("CUtensorMap", "tm")
      .Param("unsigned char*", "out")
      .Param("int", "c0")
      .Param("int", "c1")
      .Param("int", "c2")
      .Param("unsigned int", "expect")
      .Param("unsigned int", "bytes")
      .Grid({1, 1, 1})
      .Block({threads, 1, 1});
  DeclareBoxAndBarrier(b);
  b.Region("load", [&] {
    b.Stmt(
        "if (threadIdx.x == 0) { warptrace_mbarrier_arrive_expect_tx(&full, expect); "
        "warptrace_tma_load_3d(box, &tm, c0, c1, c2, &full); }");
    b.Stmt("warptrace_mbarrier_wait_parity(&full, 0);");
  });
  b.Stmt("for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = box[i];");
  return b.Build();
}

absl::StatusOr<Kernel> TmaStore2dKernel(uint32_t threads) {
  KernelBuilder b("tma_store_2d");
  b.Param("CUtensorMap", "tm")
      .Param("const unsigned char*", "in")
      .Param("int", "c0")
      .Param("int", "c1")
      .Param("unsigned int", "bytes")
      .Grid({1, 1, 1})
      .Block({threads, 1, 1});
  b.Stmt(absl::StrCat("__shared__ __align__(1024) unsigned char box[", kTmaMaxBoxBytes, "];"));
  b.Stmt("for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) box[i] = in[i];");
  b.Stmt("warptrace_fence_proxy_async();");  // the writes above, before the async proxy reads
  b.Stmt("__syncthreads();");
  b.Region("store", [&] {
    b.Stmt(
        "if (threadIdx.x == 0) { warptrace_tma_store_2d(&tm, box, c0, c1); "
        "warptrace_bulk_commit_group(); warptrace_bulk_wait_group_read(0); }");
  });
  return b.Build();
}

namespace {

// Where byte `o` of the dense box lies in shared memory (see the header).
uint64_t SwizzledPosition(uint64_t o, TensorMapSwizzle swizzle) {
  const uint32_t span = SwizzleBytes(swizzle);
  if (span == 0) return o;
  const uint64_t line = o / 128;
  const uint64_t chunk = (o / 16) % 8;
  const uint64_t moved = chunk ^ (line % (span / 16));
  return line * 128 + moved * 16 + o % 16;
}

// Calls f(box byte offset of the element, tensor byte offset or -1 when out of bounds) for
// every element of the box at `coords`.
template <typename F>
void ForEachBoxElement(const TensorMapSpec& spec, const std::vector<int>& coords, F f) {
  const size_t rank = spec.dims.size();
  const uint64_t elem = ElementBytes(spec.type);
  uint64_t count = 1;
  for (uint32_t b : spec.box) count *= b;
  for (uint64_t linear = 0; linear < count; ++linear) {
    uint64_t rest = linear;
    bool in = true;
    int64_t offset = static_cast<int64_t>(spec.offset_bytes);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t i = static_cast<int64_t>(rest % spec.box[d]);
      rest /= spec.box[d];
      const int64_t g = coords[d] + i;
      if (g < 0 || g >= static_cast<int64_t>(spec.dims[d])) in = false;
      offset += g * static_cast<int64_t>(d == 0 ? elem : spec.strides_bytes[d - 1]);
    }
    f(SwizzledPosition(linear * elem, spec.swizzle), in ? offset : -1);
  }
}

}  // namespace

std::vector<uint8_t> ReferenceLoad(const std::vector<uint8_t>& tensor, const TensorMapSpec& spec,
                                   const std::vector<int>& coords,
                                   std::vector<uint64_t>* nan_elements) {
  const uint64_t elem = ElementBytes(spec.type);
  std::vector<uint8_t> box(BoxBytes(spec), 0);
  ForEachBoxElement(spec, coords, [&](uint64_t at, int64_t from) {
    if (from >= 0) {
      for (uint64_t b = 0; b < elem; ++b) box[at + b] = tensor[from + b];
    } else if (spec.oob_fill == TensorMapOobFill::kNanRequestZeroFma && nan_elements != nullptr) {
      nan_elements->push_back(at);
    }
  });
  return box;
}

std::vector<uint8_t> ReferenceStore(std::vector<uint8_t> tensor, const TensorMapSpec& spec,
                                    const std::vector<int>& coords,
                                    const std::vector<uint8_t>& box) {
  const uint64_t elem = ElementBytes(spec.type);
  ForEachBoxElement(spec, coords, [&](uint64_t at, int64_t to) {
    if (to < 0) return;
    for (uint64_t b = 0; b < elem; ++b) tensor[to + b] = box[at + b];
  });
  return tensor;
}

}  // namespace warptrace::testing
