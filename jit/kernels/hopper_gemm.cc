#include "jit/kernels/hopper_gemm.h"

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "base/status_macros.h"
#include "jit/kernels/busy_work.h"

namespace warptrace {
namespace {

constexpr uint32_t kBk = kHopperGemmBk;
constexpr uint32_t kMmaK = 16;                      // K of one wgmma
constexpr uint64_t kMaxSharedBytes = 227 * 1024;
constexpr uint32_t kAlignSlack = 1024;              // 128B swizzle: 1024-byte aligned stages

absl::Status CheckCluster(const HopperGemmShape& shape) {
  const uint32_t cm = shape.cluster_m, cn = shape.cluster_n;
  if (shape.consumer_delay_rank >= 0 && (cm * cn == 1 || shape.consumer_delay_rank >= 2)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: consumer delay in CTA rank %d of a %dx%d cluster; the rank needs a "
        "2x1 or 1x2 cluster and is 0 or 1",
        shape.consumer_delay_rank, cm, cn));
  }
  if (cm == 1 && cn == 1) return absl::OkStatus();
  if (!((cm == 2 && cn == 1) || (cm == 1 && cn == 2))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: cluster %dx%d; use 1x1, 2x1 (B multicast) or 1x2 (A multicast)", cm, cn));
  }
  if (shape.pingpong || shape.persistent_blocks > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: cluster %dx%d is built for the cooperative, one-tile-per-block kernel; "
        "drop --pingpong and --persistent",
        cm, cn));
  }
  const uint32_t tiles_m = shape.m / HopperGemmTileRows(shape), tiles_n = shape.n / shape.bn;
  if (tiles_m % cm != 0 || tiles_n % cn != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: cluster %dx%d pairs the tiles along %s, but there are %d tiles along it "
        "(M=%d / %d, N=%d / BN=%d); make it even",
        cm, cn, cm == 2 ? "M" : "N", cm == 2 ? tiles_m : tiles_n, shape.m,
        HopperGemmTileRows(shape), shape.n, shape.bn));
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const HopperGemmShape& shape) {
  const uint32_t bm = HopperGemmTileRows(shape);
  if (shape.bn != 64 && shape.bn != 128 && shape.bn != 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("hopper_gemm: BN=", shape.bn, "; use 64, 128 or 256 (the wgmma N)"));
  }
  if (shape.stages < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("hopper_gemm: ", shape.stages, " stages; a pipeline needs at least 2"));
  }
  if (shape.m == 0 || shape.m % bm != 0 || shape.n == 0 || shape.n % shape.bn != 0 ||
      shape.k == 0 || shape.k % kBk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: M=%d must be a positive multiple of %d (the %s tile rows), N=%d of "
        "BN=%d and K=%d of %d",
        shape.m, bm, shape.pingpong ? "ping-pong" : "cooperative", shape.n, shape.bn, shape.k,
        kBk));
  }
  const uint64_t shared = HopperGemmSharedBytes(shape);
  if (shared > kMaxSharedBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: %d stages of (%d + %d) x %d bf16 take %d bytes of shared memory, more "
        "than the %d a block may have; use fewer stages or a smaller BN",
        shape.stages, bm, shape.bn, kBk, shared, kMaxSharedBytes));
  }
  const uint32_t tiles = HopperGemmTiles(shape);
  if (shape.persistent_blocks > tiles) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: %d persistent blocks for %d tiles; a persistent grid is at most the "
        "tile count",
        shape.persistent_blocks, tiles));
  }
  RETURN_IF_ERROR(CheckCluster(shape));
  if (shape.pingpong && shape.persistent_blocks == 0 && tiles % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hopper_gemm: ping-pong without --persistent gives each block two tiles, one per "
        "consumer; %d tiles is odd (use --persistent or change M or N)",
        tiles));
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t HopperGemmTileRows(const HopperGemmShape& shape) { return shape.pingpong ? 64 : 128; }

uint32_t HopperGemmTiles(const HopperGemmShape& shape) {
  if (shape.bn == 0) return 0;
  return (shape.m / HopperGemmTileRows(shape)) * (shape.n / shape.bn);
}

uint32_t HopperGemmSharedBytes(const HopperGemmShape& shape) {
  return shape.stages * (HopperGemmTileRows(shape) + shape.bn) * kBk * 2 + kAlignSlack;
}

bool HopperGemmClustered(const HopperGemmShape& shape) {
  return shape.cluster_m * shape.cluster_n > 1;
}

uint32_t HopperGemmBoxRowsA(const HopperGemmShape& shape) {
  return HopperGemmTileRows(shape) / shape.cluster_n;
}

uint32_t HopperGemmBoxRowsB(const HopperGemmShape& shape) { return shape.bn / shape.cluster_m; }

namespace {

// Writes the GEMM into a KernelBuilder.
class HopperGemmWriter {
 public:
  HopperGemmWriter(const HopperGemmShape& shape, KernelBuilder& b)
      : shape_(shape),
        b_(b),
        bm_(HopperGemmTileRows(shape)),
        kt_(shape.k / kBk),
        a_bytes_(bm_ * kBk * 2),
        stage_bytes_((bm_ + shape.bn) * kBk * 2),
        tiles_(HopperGemmTiles(shape)),
        tiles_n_(shape.n / shape.bn),
        clustered_(HopperGemmClustered(shape)) {}

  void Declarations() {
    b_.Preamble("#include <cuda_bf16.h>");
    b_.Param("CUtensorMap", "tmA").Param("CUtensorMap", "tmB");
    b_.Param(shape_.out_f32 ? "float*" : "__nv_bfloat16*", "C");
    if (shape_.persistent_blocks > 0) {
      b_.Grid({shape_.persistent_blocks, 1, 1});
    } else {
      b_.Grid({shape_.pingpong ? tiles_ / 2 : tiles_, 1, 1});
    }
    b_.Block({384, 1, 1});
    b_.DynamicShared("unsigned char", "smem", HopperGemmSharedBytes(shape_));
    b_.PhaseBarriers("full", shape_.stages, 1);
    // With a cluster: one arrival per consumer warpgroup of both CTAs.
    b_.PhaseBarriers("empty", shape_.stages,
                     clustered_ ? 4 : (shape_.pingpong ? 128 : 256));
    if (clustered_) {
      b_.Cluster({2, 1, 1});
      b_.Stmt("const unsigned int cta_rank = warptrace_cluster_ctarank();");
      // Every CTA's barriers are initialized (and fenced by the frame) before a peer's
      // multicast completes bytes on them or its consumers arrive on them.
      b_.ClusterSync("barriers ready");
    }
  }

  // After the roles: no CTA exits while its peer may still multicast into its shared memory
  // or arrive on its barriers.
  void Exit() {
    if (clustered_) b_.ClusterSync("peers done");
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
  // The stages' base: the dynamic shared memory rounded up to 1024 bytes.
  std::string Ring() const {
    return "unsigned char* const ring = reinterpret_cast<unsigned char*>(\n"
           "    (reinterpret_cast<unsigned long long>(smem) + 1023ull) & ~1023ull);";
  }

  // The number of tiles this block takes (a C expression of blockIdx and gridDim).
  std::string BlockTiles() const {
    if (shape_.persistent_blocks == 0) return shape_.pingpong ? "2" : "1";
    return absl::Substitute("(blockIdx.x < $0 ? ($0 - 1 - blockIdx.x) / gridDim.x + 1 : 0)",
                            tiles_);
  }

  // The tile of the block's j-th tile.
  std::string TileOf(const std::string& j) const {
    if (shape_.persistent_blocks > 0) {
      return absl::StrCat("static_cast<int>(blockIdx.x + (", j, ") * gridDim.x)");
    }
    if (shape_.pingpong) return absl::StrCat("static_cast<int>(2u * blockIdx.x) + (", j, ")");
    return "static_cast<int>(blockIdx.x)";
  }

  // The tile of CTA rank `cta_rank` of cluster blockIdx.x / 2 (see the header).
  std::string ClusterTile() const {
    const uint32_t clusters_n = tiles_n_ / shape_.cluster_n;
    const std::string m = shape_.cluster_m == 2 ? " * 2 + static_cast<int>(cta_rank)" : "";
    const std::string n = shape_.cluster_n == 2 ? " * 2 + static_cast<int>(cta_rank)" : "";
    return absl::Substitute(
        "const int j = jj;\n"
        "const int cluster = static_cast<int>(blockIdx.x / 2u);\n"
        "const int tile_m = (cluster / $0)$1;\n"
        "const int tile_n = (cluster % $0)$2;",
        clusters_n, m, n);
  }

  // Runs `body` for the block's j-th tiles, j = first, first + step, ...: `j`, `tile`,
  // `tile_m` and `tile_n` in scope.
  void ForEachTile(uint32_t first, uint32_t step, const std::function<void()>& body) {
    const std::string count =
        absl::Substitute("($0 + $1) / $2", BlockTiles(), step - 1 - first, step);
    auto tile_body = [&] {
      if (clustered_) {
        b_.Stmt(ClusterTile());
      } else {
        b_.Stmt(absl::Substitute(
            "const int j = $0 + $1 * jj;\n"
            "const int tile = $2;\n"
            "const int tile_m = tile / $3;\n"
            "const int tile_n = tile % $3;",
            first, step, TileOf("j"), tiles_n_));
      }
      body();
    };
    if (shape_.persistent_blocks == 0) {
      const uint32_t n = ((shape_.pingpong ? 2 : 1) + step - 1 - first) / step;
      b_.For("jj", 0, static_cast<int64_t>(n), TripCount::Exact(n), tile_body);
    } else {
      b_.For("jj", 0, count, TripCount::PerBlock(count), tile_body);
    }
  }

  // Runs `body` per K-block of tile j: `it` (the ring's use), `stage`, `phase`, `stage_a`,
  // `stage_b` (the stage's A and B tiles) in scope.
  void ForEachKBlock(const std::function<void()>& body) {
    b_.For("kt", 0, static_cast<int64_t>(kt_), TripCount::Exact(kt_), [&] {
      b_.Stmt(absl::Substitute(
          "const unsigned int it = static_cast<unsigned int>(j * $0 + kt);\n"
          "const unsigned int stage = it % $1u;\n"
          "const unsigned int phase = it / $1u;\n"
          "unsigned char* const stage_a = ring + stage * $2u;\n"
          "unsigned char* const stage_b = stage_a + $3u;",
          kt_, shape_.stages, stage_bytes_, a_bytes_));
      body();
    });
  }

  void Producer() {
    b_.SetMaxRegisters(40, RegisterChange::kDecrease);
    b_.Stmt(Ring());
    ForEachTile(0, 1, [&] {
      ForEachKBlock([&] {
        if (shape_.planted_bug == HopperGemmRaceBug::kProducerSkipsEmptyWait) {
          b_.If(absl::StrCat("it != ", shape_.stages + 1, "u"),
                [&] { b_.WaitPhase("empty", "stage", "phase"); }, Uniform::kBlock);
        } else {
          b_.WaitPhase("empty", "stage", "phase");
        }
        b_.Region("load", [&] {
          if (shape_.producer_delay > 0) b_.Stmt(BusyWork(shape_.producer_delay));
          Load("A tile", "tmA", "stage_a", "tile_m", bm_, shape_.cluster_n == 2);
          Load("B tile", "tmB", "stage_b", "tile_n", shape_.bn, shape_.cluster_m == 2);
          b_.Arrive("full", "stage", "phase", ArriveBy::kOneThread);
        });
      });
    });
  }

  // Loads the operand's rows [tile * rows, + rows) into `dst`; `multicast`: this CTA's half
  // of them, into the same half of both CTAs' stage (ctaMask 0b11).
  void Load(const char* name, const char* map, const char* dst, const char* tile,
            uint32_t rows, bool multicast) {
    AsyncCopySpec spec;
    spec.tensor_map = map;
    if (multicast) {
      const uint32_t half = rows / 2;
      spec.name = absl::StrCat(name, " half - multicast");
      spec.dst = absl::StrCat(dst, " + cta_rank * ", half * kBk * 2, "u");
      spec.coords = {"kt * 64", absl::StrCat(tile, " * ", rows, " + static_cast<int>(cta_rank) * ",
                                             half)};
      spec.box = {kBk, half};
      spec.multicast_mask = "0x3";
    } else {
      spec.name = name;
      spec.dst = dst;
      spec.coords = {"kt * 64", absl::StrCat(tile, " * ", rows)};
      spec.box = {kBk, rows};
    }
    spec.element_bytes = 2;
    spec.barrier = "full";
    spec.barrier_index = "stage";
    spec.barrier_phase = "phase";
    b_.AsyncCopy(spec);
  }

  // consumer: -1 cooperative (both warpgroups, `cwg` their index), else the ping-pong
  // consumer 0 or 1.
  void Consumer(int consumer) {
    b_.SetMaxRegisters(232, RegisterChange::kIncrease);
    b_.Stmt(Ring());
    const uint32_t s = shape_.stages;
    if (consumer <= 0) {  // the first lap's empty phases (ping-pong: one consumer's arrivals)
      b_.For("first", 0, static_cast<int64_t>(s), TripCount::Exact(s),
             [&] { Release("first", "0"); });
    }
    if (consumer == 1) {  // consumer 0 takes the first turn
      b_.NamedBarrierArrive("turn0", 1, 256);
    }
    const uint32_t first = consumer < 0 ? 0 : static_cast<uint32_t>(consumer);
    const uint32_t step = consumer < 0 ? 1 : 2;
    const std::string rows = consumer < 0 ? "cwg * 64" : "0";
    ForEachTile(first, step, [&] {
      b_.Stmt(absl::StrCat("float acc[", shape_.bn / 2, "];"));
      if (consumer >= 0) {
        b_.NamedBarrierSync(absl::StrCat("turn", consumer), 1 + consumer, 256,
                            BarrierRecord::kAlways);
      }
      ForEachKBlock([&] {
        if (shape_.planted_bug == HopperGemmRaceBug::kConsumerSkipsFullWait) {
          b_.If(absl::StrCat("it != ", shape_.stages, "u"),
                [&] { b_.WaitPhase("full", "stage", "phase"); }, Uniform::kBlock);
        } else {
          b_.WaitPhase("full", "stage", "phase");
        }
        b_.Region("mma", [&] {
          if (shape_.consumer_delay > 0) b_.Stmt(ConsumerDelay());
          b_.MmaGroup("wgmma", [&] {
            b_.Stmt(absl::Substitute(
                "for (int kk = 0; kk < $0; ++kk) {\n"
                "  const unsigned long long da = warptrace_wgmma_desc(stage_a + ($1) * 128 + "
                "kk * 32, 16u, 1024u, WARPTRACE_SWIZZLE_128B);\n"
                "  const unsigned long long db = warptrace_wgmma_desc(stage_b + kk * 32, 16u, "
                "1024u, WARPTRACE_SWIZZLE_128B);\n"
                "  warptrace_wgmma_mma_async_bf16_ss<$2>(acc, da, db, (kt > 0 || kk > 0) ? 1 : "
                "0);\n"
                "}",
                kBk / kMmaK, rows, shape_.bn));
          });
          if (shape_.planted_bug == HopperGemmRaceBug::kReleaseBeforeMmaRetires) {
            Release("stage", "phase + 1");
          }
          b_.WaitMmaGroups(0);
        });
        if (shape_.planted_bug != HopperGemmRaceBug::kReleaseBeforeMmaRetires) {
          Release("stage", "phase + 1");
        }
      });
      if (consumer >= 0) {  // the other consumer's turn
        b_.NamedBarrierArrive(absl::StrCat("turn", 1 - consumer), 2 - consumer, 256);
      }
      b_.Region("epilogue", [&] { b_.Stmt(Epilogue(rows)); });
    });
  }

  // The consumer's release of a stage: every thread on empty[stage], or with a cluster one
  // thread per warpgroup on empty[stage] of both CTAs (both producers refill it).
  void Release(const char* stage, const char* phase) {
    if (!clustered_) {
      b_.Arrive("empty", stage, phase);
      return;
    }
    b_.Arrive("empty", stage, phase, ArriveBy::kOneThreadPerWarpgroup);
    b_.ArriveRemote("empty", stage, phase, "cta_rank ^ 1u", ArriveBy::kOneThreadPerWarpgroup);
  }

  std::string ConsumerDelay() const {
    if (shape_.consumer_delay_rank < 0) return BusyWork(shape_.consumer_delay);
    return absl::StrCat("if (cta_rank == ", shape_.consumer_delay_rank, "u) {\n",
                        BusyWork(shape_.consumer_delay), "\n}");
  }

  // Thread T of the warpgroup holds d_i at row 16w + g + 8((i >> 1) & 1), column
  // 8(i >> 2) + 2t + (i & 1) of its 64 x BN accumulator (w = T / 32, g = lane / 4, t = lane % 4).
  std::string Epilogue(const std::string& rows) const {
    const char* store = shape_.out_f32 ? "acc[i]" : "__float2bfloat16(acc[i])";
    const char* store1 = shape_.out_f32 ? "acc[i + 1]" : "__float2bfloat16(acc[i + 1])";
    return absl::Substitute(
        "const int wt = static_cast<int>(threadIdx.x % 128u);\n"
        "const int w = wt / 32, g = (wt % 32) / 4, t = wt % 4;\n"
        "for (int i = 0; i < $0; i += 2) {\n"
        "  const int row = tile_m * $1 + $2 + 16 * w + g + 8 * ((i >> 1) & 1);\n"
        "  const int col = tile_n * $3 + 8 * (i >> 2) + 2 * t;\n"
        "  C[static_cast<long long>(row) * $4 + col] = $5;\n"
        "  C[static_cast<long long>(row) * $4 + col + 1] = $6;\n"
        "}",
        shape_.bn / 2, bm_, rows, shape_.bn, shape_.n, store, store1);
  }

  const HopperGemmShape& shape_;
  KernelBuilder& b_;
  const uint32_t bm_;
  const uint32_t kt_;
  const uint32_t a_bytes_;
  const uint32_t stage_bytes_;
  const uint32_t tiles_;
  const uint32_t tiles_n_;
  const bool clustered_;
};

}  // namespace

absl::StatusOr<KernelBuilder> HopperGemmBuilder(const HopperGemmShape& shape) {
  RETURN_IF_ERROR(CheckShape(shape));
  KernelBuilder b("hopper_gemm");
  HopperGemmWriter writer(shape, b);
  writer.Declarations();
  writer.Roles();
  writer.Exit();
  return b;
}

absl::StatusOr<Kernel> HopperGemm(const HopperGemmShape& shape) {
  ASSIGN_OR_RETURN(const KernelBuilder b, HopperGemmBuilder(shape));
  return b.Build();
}

}  // namespace warptrace
