#include "jit/kernels/flash_attention.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "base/status_macros.h"
#include "jit/kernels/busy_work.h"

namespace warptrace {
namespace {

constexpr uint32_t kBm = kFlashAttentionBlockM;
constexpr uint32_t kBn = kFlashAttentionBlockN;
constexpr uint32_t kBox = kFlashAttentionBoxCols;
constexpr uint32_t kStages = kFlashAttentionStages;
constexpr uint32_t kMmaK = 16;          // K of one wgmma
constexpr uint32_t kAlignSlack = 1024;  // 128B swizzle: 1024-byte aligned tiles
constexpr uint32_t kMaxGridYz = 65535;

absl::Status CheckShape(const FlashAttentionShape& shape) {
  if (shape.head_dim != 64 && shape.head_dim != 128) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flash_attention: head_dim=", shape.head_dim, "; use 64 or 128"));
  }
  if (shape.seq == 0 || shape.seq % kBm != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "flash_attention: seq=%d must be a positive multiple of %d (the query and KV tile "
        "rows)",
        shape.seq, kBm));
  }
  if (shape.batch == 0 || shape.heads == 0 || shape.batch > kMaxGridYz ||
      shape.heads > kMaxGridYz) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "flash_attention: batch=%d and heads=%d must be 1..%d (the grid's z and y)",
        shape.batch, shape.heads, kMaxGridYz));
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t FlashAttentionTiles(const FlashAttentionShape& shape) { return shape.seq / kBm; }

uint32_t FlashAttentionKvTiles(const FlashAttentionShape& shape, uint32_t query_tile) {
  return shape.causal ? query_tile + 1 : shape.seq / kBn;
}

uint32_t FlashAttentionSharedBytes(const FlashAttentionShape& shape) {
  return (kBm + 2 * kStages * kBn) * shape.head_dim * 2 + kAlignSlack;
}

namespace {

// Writes the kernel into a KernelBuilder.
class FlashAttentionWriter {
 public:
  FlashAttentionWriter(const FlashAttentionShape& shape, KernelBuilder& b)
      : shape_(shape),
        b_(b),
        d_(shape.head_dim),
        halves_(shape.head_dim / kBox),
        half_bytes_(kBm * kBox * 2),
        q_bytes_(kBm * shape.head_dim * 2),
        kv_bytes_(kBn * shape.head_dim * 2) {}

  void Declarations() {
    b_.Preamble("#include <cuda_bf16.h>");
    b_.Param("CUtensorMap", "tmQ").Param("CUtensorMap", "tmK").Param("CUtensorMap", "tmV");
    b_.Param("__nv_bfloat16*", "O");
    b_.Grid({FlashAttentionTiles(shape_), shape_.heads, shape_.batch});
    b_.Block({384, 1, 1});
    b_.DynamicShared("unsigned char", "smem", FlashAttentionSharedBytes(shape_));
    b_.PhaseBarriers("q_full", 1, 1);
    b_.PhaseBarriers("k_full", kStages, 1);
    b_.PhaseBarriers("v_full", kStages, 1);
    b_.PhaseBarriers("k_empty", kStages, 256);
    b_.PhaseBarriers("v_empty", kStages, 256);
  }

  void Roles() {
    std::vector<Role> roles = {{"producer", 1, "", [&] { Producer(); }}};
    if (shape_.pingpong) {
      roles.push_back({"consumer0", 1, "", [&] { Consumer(0); }});
      roles.push_back({"consumer1", 1, "", [&] { Consumer(1); }});
    } else {
      roles.push_back({"consumer", 2, "cwg", [&] { Consumer(-1); }});
    }
    b_.Roles(RoleAxis::kWarpgroup, std::move(roles));
  }

 private:
  // Q, then the K ring, then the V ring, from the dynamic shared memory rounded up to 1024.
  std::string Ring() const {
    return absl::Substitute(
        "unsigned char* const q_tile = reinterpret_cast<unsigned char*>(\n"
        "    (reinterpret_cast<unsigned long long>(smem) + 1023ull) & ~1023ull);\n"
        "unsigned char* const k_ring = q_tile + $0u;\n"
        "unsigned char* const v_ring = k_ring + $1u;",
        q_bytes_, kStages * kv_bytes_);
  }

  // The number of KV tiles of this block, as a C expression.
  std::string KvTiles() const {
    return shape_.causal ? "(static_cast<int>(blockIdx.x) + 1)"
                         : absl::StrCat(shape_.seq / kBn);
  }

  // Loops j over [first, KV tiles), planned exactly (per block when causal).
  void ForEachKvTile(int first, const std::function<void()>& body) {
    if (shape_.causal) {
      b_.For("j", first, KvTiles(),
             TripCount::PerBlock(absl::StrCat("blockIdx.x + 1 - ", first)), body);
    } else {
      const uint32_t n = shape_.seq / kBn - static_cast<uint32_t>(first);
      b_.For("j", first, static_cast<int64_t>(shape_.seq / kBn), TripCount::Exact(n), body);
    }
  }

  // `stage` and `phase` of use `use` of the ring (a C expression), named with `suffix`.
  std::string StageOf(const std::string& use, const std::string& suffix) const {
    return absl::Substitute(
        "const unsigned int stage$0 = static_cast<unsigned int>($1) % $2u;\n"
        "const unsigned int phase$0 = static_cast<unsigned int>($1) / $2u;",
        suffix, use, kStages);
  }

  void Load(const std::string& name, const char* map, const std::string& dst,
            const std::string& row, const char* barrier, const std::string& index,
            const std::string& phase) {
    for (uint32_t half = 0; half < halves_; ++half) {
      AsyncCopySpec spec;
      spec.name = halves_ == 1 ? name : absl::StrCat(name, " ", half);
      spec.tensor_map = map;
      spec.dst = absl::StrCat(dst, " + ", half * half_bytes_, "u");
      spec.coords = {absl::StrCat(half * kBox), row};
      spec.box = {kBox, kBm};
      spec.element_bytes = 2;
      spec.barrier = barrier;
      spec.barrier_index = index;
      spec.barrier_phase = phase;
      b_.AsyncCopy(spec);
    }
  }

  void Producer() {
    b_.SetMaxRegisters(24, RegisterChange::kDecrease);
    b_.Stmt(Ring());
    b_.Stmt(absl::Substitute(
        "const int bh_row = (static_cast<int>(blockIdx.z) * $0 + static_cast<int>(blockIdx.y)) "
        "* $1;\n"
        "const int q_row = bh_row + static_cast<int>(blockIdx.x) * $2;",
        shape_.heads, shape_.seq, kBm));
    b_.Region("load", [&] {
      Load("Q tile", "tmQ", "q_tile", "q_row", "q_full", "0", "0");
      b_.Arrive("q_full", 0, 0, ArriveBy::kOneThread);
    });
    ForEachKvTile(0, [&] {
      b_.Stmt(StageOf("j", ""));
      const std::string row = absl::StrCat("bh_row + j * ", kBn);
      b_.WaitPhase("k_empty", "stage", "phase");
      b_.Region("load", [&] {
        if (shape_.producer_delay > 0) b_.Stmt(BusyWork(shape_.producer_delay));
        Load("K tile", "tmK", absl::StrCat("k_ring + stage * ", kv_bytes_, "u"), row, "k_full",
             "stage", "phase");
        b_.Arrive("k_full", "stage", "phase", ArriveBy::kOneThread);
      });
      b_.WaitPhase("v_empty", "stage", "phase");
      b_.Region("load", [&] {
        Load("V tile", "tmV", absl::StrCat("v_ring + stage * ", kv_bytes_, "u"), row, "v_full",
             "stage", "phase");
        b_.Arrive("v_full", "stage", "phase", ArriveBy::kOneThread);
      });
    });
  }

  // Keeps the compiler from moving accesses of the wgmma operands in registers across the
  // asynchronous wgmma (CUTLASS's warpgroup_fence_operand): the accumulators `s` and `o`,
  // and the A fragments `p` (read by a pending pv until its wait). Before each group's
  // issue and after each wait.
  void FenceOperands() {
    b_.Stmt(absl::Substitute(
        "warptrace_wgmma_fence_operand(s);\n"
        "warptrace_wgmma_fence_operand(o);\n"
        "#if defined(__CUDA_ARCH__)\n"
        "for (int kk = 0; kk < $0; ++kk) {\n"
        "  for (int r = 0; r < 4; ++r) asm volatile(\"\" : \"+r\"(p[kk][r])::\"memory\");\n"
        "}\n"
        "#endif",
        kBn / kMmaK));
  }

  void Wait(uint32_t pending) {
    b_.WaitMmaGroups(pending);
    FenceOperands();
  }

  // With --pingpong, `body` (wgmma issues) runs in this consumer's turn.
  void Turn(int consumer, const std::function<void()>& body) {
    if (consumer < 0) {
      FenceOperands();
      body();
      return;
    }
    b_.NamedBarrierSync(absl::StrCat("turn", consumer), 1 + consumer, 256,
                        BarrierRecord::kAlways);
    FenceOperands();
    body();
    b_.NamedBarrierArrive(absl::StrCat("turn", 1 - consumer), 2 - consumer, 256);
  }

  // S = Q K^T for the K tile in ring stage `stage`: D / 16 k-steps, each inside one of the
  // 64-column (128-byte) boxes of Q and K: box kk / 4, 32 bytes per step within it.
  void Qk(const std::string& stage) {
    b_.MmaGroup("qk", [&] {
      b_.Stmt(absl::Substitute(
          "const unsigned char* const k_tile = k_ring + ($0) * $1u;\n"
          "for (int kk = 0; kk < $2; ++kk) {\n"
          "  const unsigned long long da = warptrace_wgmma_desc(q_tile + (kk / 4) * $3 + c * "
          "$4 + (kk % 4) * 32, 16u, 1024u, WARPTRACE_SWIZZLE_128B);\n"
          "  const unsigned long long db = warptrace_wgmma_desc(k_tile + (kk / 4) * $3 + (kk % "
          "4) * 32, 16u, 1024u, WARPTRACE_SWIZZLE_128B);\n"
          "  warptrace_wgmma_mma_async_bf16_ss<$5>(s, da, db, kk > 0 ? 1 : 0);\n"
          "}",
          stage, kv_bytes_, d_ / kMmaK, half_bytes_, 64 * 128, kBn));
    });
  }

  // O += P V for the V tile in ring stage `stage`: 128 / 16 k-steps (16 KV rows, 2048 bytes
  // of each box); V is MN-major: 64 columns per 128-byte row, the boxes LBO apart, 8-row
  // groups SBO = 1024 apart.
  void Pv(const std::string& stage) {
    b_.MmaGroup("pv", [&] {
      b_.Stmt(absl::Substitute(
          "const unsigned char* const v_tile = v_ring + ($0) * $1u;\n"
          "for (int kk = 0; kk < $2; ++kk) {\n"
          "  const unsigned long long db = warptrace_wgmma_desc(v_tile + kk * 2048, $3u, 1024u, "
          "WARPTRACE_SWIZZLE_128B);\n"
          "  warptrace_wgmma_mma_async_bf16_rs<$4, 1>(o, p[kk], db, 1);\n"
          "}",
          stage, kv_bytes_, kBn / kMmaK, half_bytes_, d_));
    });
  }

  // The online softmax of S (KV tile `j`): scaled to log2 units, masked on the causal
  // diagonal, new row maxima (quad shuffles), s = exp2(s - max), the correction of the old
  // maxima, the row sums (this thread's part: the quad sums them in the epilogue).
  std::string Softmax(const std::string& j) const {
    const double scale = 1.4426950408889634 / std::sqrt(static_cast<double>(d_));
    std::string mask, lanes;
    if (shape_.causal) {
      lanes =
          "const int wt = static_cast<int>(threadIdx.x % 128u);\n"
          "const int w = wt / 32, g = (wt % 32) / 4, t = wt % 4;\n";
      // The diagonal tile (KV tile = query tile, both 128 rows) masks column > row.
      mask = absl::Substitute(
          "  if (($0) == $1 - 1 && 8 * (i >> 2) + 2 * t + (i & 1) > c * 64 + 16 * w + g + 8 * "
          "((i >> 1) & 1)) {\n"
          "    x = -1e30f;\n"
          "  }\n",
          j, KvTiles());
    }
    std::string code;
    if (shape_.consumer_delay > 0) absl::StrAppend(&code, BusyWork(shape_.consumer_delay), "\n");
    absl::StrAppend(
        &code,
        absl::Substitute(
            "$3"
            "float mx[2] = {row_max[0], row_max[1]};\n"
            "for (int i = 0; i < $0; ++i) {\n"
            "  float x = s[i] * $1f;\n"
            "$2"
            "  s[i] = x;\n"
            "  mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], x);\n"
            "}\n"
            "float base[2];\n"
            "for (int h = 0; h < 2; ++h) {\n"
            "  mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));\n"
            "  mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));\n"
            "  base[h] = mx[h] <= -1e29f ? 0.0f : mx[h];  // a row masked so far: all zeros\n"
            "  corr[h] = exp2f(row_max[h] - base[h]);\n"
            "  row_max[h] = mx[h];\n"
            "}\n"
            "float sum[2] = {0.0f, 0.0f};\n"
            "for (int i = 0; i < $0; ++i) {\n"
            "  s[i] = exp2f(s[i] - base[(i >> 1) & 1]);\n"
            "  sum[(i >> 1) & 1] += s[i];\n"
            "}\n"
            "for (int h = 0; h < 2; ++h) row_sum[h] = row_sum[h] * corr[h] + sum[h];",
            kBn / 2, absl::StrFormat("%.9g", scale), mask, lanes));
    return code;
  }

  // O *= the correction; P (bf16) from S: the A fragment of k-step kk, register r, holds
  // S's elements 8kk + 2r (low half) and 8kk + 2r + 1 (same rows and columns).
  std::string Rescale() const {
    return absl::Substitute(
        "for (int i = 0; i < $0; ++i) o[i] *= corr[(i >> 1) & 1];\n"
        "for (int kk = 0; kk < $1; ++kk) {\n"
        "  for (int r = 0; r < 4; ++r) {\n"
        "    const __nv_bfloat162 v = __floats2bfloat162_rn(s[8 * kk + 2 * r], s[8 * kk + 2 * "
        "r + 1]);\n"
        "    p[kk][r] = static_cast<unsigned int>(__bfloat16_as_ushort(v.x)) |\n"
        "               (static_cast<unsigned int>(__bfloat16_as_ushort(v.y)) << 16);\n"
        "  }\n"
        "}",
        d_ / 2, kBn / kMmaK);
  }

  // Thread T of the warpgroup holds o_i at row 16w + g + 8((i >> 1) & 1), column
  // 8(i >> 2) + 2t + (i & 1) of its 64 x D rows.
  std::string Epilogue() const {
    return absl::Substitute(
        "const int wt = static_cast<int>(threadIdx.x % 128u);\n"
        "const int w = wt / 32, g = (wt % 32) / 4, t = wt % 4;\n"
        "float total[2];\n"
        "for (int h = 0; h < 2; ++h) {\n"
        "  total[h] = row_sum[h] + __shfl_xor_sync(0xffffffffu, row_sum[h], 1);\n"
        "  total[h] += __shfl_xor_sync(0xffffffffu, total[h], 2);\n"
        "}\n"
        "const long long row0 = (static_cast<long long>(blockIdx.z) * $0 + blockIdx.y) * $1 + "
        "static_cast<long long>(blockIdx.x) * $2 + c * 64 + 16 * w + g;\n"
        "for (int i = 0; i < $3; i += 2) {\n"
        "  const long long row = row0 + 8 * ((i >> 1) & 1);\n"
        "  const int col = 8 * (i >> 2) + 2 * t;\n"
        "  const float inv = 1.0f / total[(i >> 1) & 1];\n"
        "  O[row * $4 + col] = __float2bfloat16(o[i] * inv);\n"
        "  O[row * $4 + col + 1] = __float2bfloat16(o[i + 1] * inv);\n"
        "}",
        shape_.heads, shape_.seq, kBm, d_ / 2, d_);
  }

  // consumer: -1 both warpgroups in one role (`cwg` their index), else the ping-pong
  // consumer 0 or 1.
  void Consumer(int consumer) {
    b_.SetMaxRegisters(240, RegisterChange::kIncrease);
    b_.Stmt(Ring());
    b_.For("first", 0, static_cast<int64_t>(kStages), TripCount::Exact(kStages), [&] {
      b_.Arrive("k_empty", "first", 0);
      b_.Arrive("v_empty", "first", 0);
    });
    if (consumer == 1) {  // consumer 0 takes the first turn
      b_.NamedBarrierArrive("turn0", 1, 256);
    }
    b_.Stmt(absl::Substitute(
        "const int c = $0;\n"
        "float s[$1];\n"
        "float o[$2];\n"
        "unsigned int p[$3][4];\n"
        "for (int i = 0; i < $2; ++i) o[i] = 0.0f;\n"
        "float row_max[2] = {-1e30f, -1e30f};\n"
        "float row_sum[2] = {0.0f, 0.0f};\n"
        "float corr[2] = {1.0f, 1.0f};",
        consumer < 0 ? std::string("cwg") : absl::StrCat(consumer), kBn / 2, d_ / 2,
        kBn / kMmaK));
    b_.WaitPhase("q_full", 0, 0);
    if (!shape_.overlap) {
      ForEachKvTile(0, [&] {
        b_.Stmt(StageOf("j", ""));
        b_.WaitPhase("k_full", "stage", "phase");
        Turn(consumer, [&] { Qk("stage"); });
        Wait(0);
        b_.Arrive("k_empty", "stage", "phase + 1");
        b_.Region("softmax", [&] {
          b_.Stmt(Softmax("j"));
          b_.Stmt(Rescale());
        });
        b_.WaitPhase("v_full", "stage", "phase");
        Turn(consumer, [&] { Pv("stage"); });
        Wait(0);
        b_.Arrive("v_empty", "stage", "phase + 1");
      });
    } else {
      // Tile 0: its S and softmax.
      b_.WaitPhase("k_full", 0, 0);
      Turn(consumer, [&] { Qk("0"); });
      Wait(0);
      b_.Arrive("k_empty", 0, 1);
      b_.Region("softmax", [&] { b_.Stmt(Softmax("0")); });
      b_.Region("rescale", [&] { b_.Stmt(Rescale()); });
      // Tile j: S_j and P_{j-1} V_{j-1} issued together, softmax j while pv runs.
      ForEachKvTile(1, [&] {
        b_.Stmt(StageOf("j", ""));
        b_.Stmt(StageOf("j - 1", "_v"));
        b_.WaitPhase("k_full", "stage", "phase");
        b_.WaitPhase("v_full", "stage_v", "phase_v");
        Turn(consumer, [&] {
          Qk("stage");
          Pv("stage_v");
        });
        Wait(1);  // qk done, pv in flight
        b_.Arrive("k_empty", "stage", "phase + 1");
        b_.Region("softmax", [&] { b_.Stmt(Softmax("j")); });
        Wait(0);
        b_.Arrive("v_empty", "stage_v", "phase_v + 1");
        b_.Region("rescale", [&] { b_.Stmt(Rescale()); });
      });
      // The last tile's P V.
      b_.Stmt(StageOf(absl::StrCat(KvTiles(), " - 1"), "_last"));
      b_.WaitPhase("v_full", "stage_last", "phase_last");
      Turn(consumer, [&] { Pv("stage_last"); });
      Wait(0);
      b_.Arrive("v_empty", "stage_last", "phase_last + 1");
    }
    b_.Region("epilogue", [&] { b_.Stmt(Epilogue()); });
  }

  const FlashAttentionShape& shape_;
  KernelBuilder& b_;
  const uint32_t d_;
  const uint32_t halves_;
  const uint32_t half_bytes_;
  const uint32_t q_bytes_;
  const uint32_t kv_bytes_;
};

}  // namespace

absl::StatusOr<KernelBuilder> FlashAttentionBuilder(const FlashAttentionShape& shape) {
  RETURN_IF_ERROR(CheckShape(shape));
  KernelBuilder b("flash_attention");
  FlashAttentionWriter writer(shape, b);
  writer.Declarations();
  writer.Roles();
  return b;
}

absl::StatusOr<Kernel> FlashAttention(const FlashAttentionShape& shape) {
  ASSIGN_OR_RETURN(const KernelBuilder b, FlashAttentionBuilder(shape));
  return b.Build();
}

}  // namespace warptrace
