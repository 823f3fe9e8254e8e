#include "jit/kernels/warp_specialized_pipeline.h"

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"

namespace warptrace {
namespace {

constexpr uint32_t kBn = 32;
constexpr uint32_t kBk = 32;
constexpr uint32_t kRowsPerConsumer = 4;
constexpr uint64_t kMaxSharedBytes = 227 * 1024;

absl::Status CheckShape(const PipelineShape& shape) {
  const uint32_t bm = kRowsPerConsumer * shape.consumers;
  if (shape.stages < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline: ", shape.stages, " stages; a pipeline needs at least 2"));
  }
  if (shape.consumers < 1 || shape.consumers > 7) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline: ", shape.consumers, " consumer warpgroups; use 1..7 (1024 threads a block)"));
  }
  if (shape.m == 0 || shape.m % bm != 0 || shape.n == 0 || shape.n % kBn != 0 ||
      shape.k == 0 || shape.k % kBk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pipeline: M=%d must be a positive multiple of %d (4 rows x %d consumers), N=%d and "
        "K=%d of 32",
        shape.m, bm, shape.consumers, shape.n, shape.k));
  }
  const uint64_t shared = uint64_t{shape.stages} * (bm + kBn) * kBk * 4;
  if (shared > kMaxSharedBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pipeline: %d stages of %d x 32 floats take %d bytes of shared memory, more than the "
        "%d a block may have; use fewer stages or consumers",
        shape.stages, bm + kBn, shared, kMaxSharedBytes));
  }
  if (shape.persistent_blocks > PipelineTiles(shape)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pipeline: %d persistent blocks for %d tiles; a persistent grid is at most the tile "
        "count",
        shape.persistent_blocks, PipelineTiles(shape)));
  }
  return absl::OkStatus();
}

// `cycles` of busy work (nothing when 0).
std::string Delay(uint32_t cycles) {
  return absl::StrCat("const long long delay_start = clock64();\n"
                      "while (clock64() - delay_start < ",
                      cycles, "ll) {\n}");
}

}  // namespace

uint32_t PipelineTiles(const PipelineShape& shape) {
  const uint32_t bm = kRowsPerConsumer * shape.consumers;
  return bm == 0 ? 0 : (shape.m / bm) * (shape.n / kBn);
}

absl::StatusOr<KernelBuilder> WarpSpecializedPipelineBuilder(const PipelineShape& shape) {
  if (absl::Status status = CheckShape(shape); !status.ok()) return status;
  const uint32_t bm = kRowsPerConsumer * shape.consumers;
  const uint32_t kt = shape.k / kBk;
  const uint32_t s = shape.stages;
  const uint32_t stage_floats = (bm + kBn) * kBk;
  const uint32_t tiles = PipelineTiles(shape);
  const uint32_t tiles_n = shape.n / kBn;
  const bool persistent = shape.persistent_blocks > 0;
  const bool bulk = shape.copy == CopyKind::kBulk;
  const uint32_t consumer_threads = 128 * shape.consumers;

  KernelBuilder b("warp_specialized_pipeline");
  b.Param("const float*", "A").Param("const float*", "B").Param("float*", "C");
  if (persistent) {
    b.Grid({shape.persistent_blocks, 1, 1});
  } else {
    b.Grid({tiles_n, shape.m / bm, 1});
  }
  b.Block({128 * (1 + shape.consumers), 1, 1});
  b.DynamicShared("float", "stages", s * stage_floats * 4);
  b.PhaseBarriers("full", s, bulk ? 1 : 128);
  b.PhaseBarriers("empty", s, consumer_threads);

  // Runs `body` for each of the block's tiles, with `tile` (its index) and `tile_iter` (the
  // block's count of tiles before it) in scope.
  const auto for_each_tile = [&](const std::function<void()>& body) {
    if (!persistent) {
      b.Stmt("const int tile = blockIdx.x + blockIdx.y * gridDim.x;\nconst int tile_iter = 0;");
      body();
      return;
    }
    const std::string count = absl::Substitute(
        "blockIdx.x < $0 ? ($0 - 1 - blockIdx.x) / gridDim.x + 1 : 0", tiles);
    b.For("tile", "blockIdx.x", static_cast<int64_t>(tiles), "gridDim.x",
          TripCount::PerBlock(count), [&] {
            b.Stmt("const int tile_iter = (tile - static_cast<int>(blockIdx.x)) / "
                   "static_cast<int>(gridDim.x);");
            body();
          });
  };
  // Runs `body` for each K-tile of the tile, with the ring's use `it`, its `stage` and
  // `phase` in scope.
  // The producer also gets the tile's `block_row` and `block_col`.
  const auto for_each_k_tile = [&](bool producer, const std::function<void()>& body) {
    b.For("kt", 0, static_cast<int64_t>(kt), TripCount::Exact(kt), [&] {
      b.Stmt(absl::Substitute(
          "const unsigned int it = static_cast<unsigned int>(tile_iter * $0 + kt);\n"
          "const unsigned int stage = it % $1u;\n"
          "const unsigned int phase = it / $1u;",
          kt, s));
      if (producer) {
        b.Stmt(absl::Substitute("const int block_row = tile / $0 * $1;\n"
                                "const int block_col = tile % $0 * $2;",
                                tiles_n, bm, kBn));
      }
      body();
    });
  };

  const std::string dst_a = absl::StrCat("stages + stage * ", stage_floats);
  const std::string dst_b = absl::StrCat("stages + stage * ", stage_floats, " + ", bm * kBk);
  const std::string src_a = absl::StrCat("A + block_row * ", shape.k, " + kt * ", kBk);
  const std::string src_b = absl::StrCat("B + kt * ", kBk * shape.n, " + block_col");
  const auto copy = [&](const char* name, const std::string& dst, const std::string& src,
                        uint32_t rows, uint32_t stride_floats) {
    AsyncCopySpec spec;
    spec.name = name;
    spec.dst = dst;
    spec.src = src;
    spec.rows = rows;
    spec.row_bytes = kBk * 4;
    spec.src_row_stride_bytes = absl::StrCat(stride_floats * 4);
    if (bulk) {
      spec.barrier = "full";
      spec.barrier_index = "stage";
      spec.barrier_phase = "phase";
    }
    b.AsyncCopy(spec);
  };
  const auto producer = [&] {
    for_each_tile([&] {
      for_each_k_tile(true, [&] {
        b.WaitPhase("empty", "stage", "phase");
        b.Region("load", [&] {
          if (shape.producer_delay > 0) b.Stmt(Delay(shape.producer_delay));
          if (bulk) {
            b.ArriveExpectTx("full", "stage", "phase",
                             static_cast<int64_t>((bm + kBn) * kBk * 4), ArriveBy::kOneThread);
          }
          copy("A tile", dst_a, src_a, bm, shape.k);
          copy("B tile", dst_b, src_b, kBk, shape.n);
          if (!bulk) {
            b.WaitAsyncCopies();
            b.Arrive("full", "stage", "phase");
          }
        });
      });
    });
  };
  const auto consumer = [&] {
    b.For("first", 0, static_cast<int64_t>(s), TripCount::Exact(s),
          [&] { b.Arrive("empty", "first", 0); });
    for_each_tile([&] {
      b.Stmt("float acc = 0.0f;");
      for_each_k_tile(false, [&] {
        b.WaitPhase("full", "stage", "phase");
        b.Region("mma", [&] {
          if (shape.consumer_delay > 0) b.Stmt(Delay(shape.consumer_delay));
          b.Stmt(absl::Substitute(
              "const float* sa = stages + stage * $0;\n"
              "const float* sb = sa + $1;\n"
              "const int r = cwg * $2 + (threadIdx.x % 128) / 32;\n"
              "const int c = threadIdx.x % 32;\n"
              "for (int kk = 0; kk < $3; ++kk) {\n"
              "  acc = fmaf(sa[r * $3 + kk], sb[kk * $4 + c], acc);\n"
              "}",
              stage_floats, bm * kBk, kRowsPerConsumer, kBk, kBn));
        });
        b.Arrive("empty", "stage", "phase + 1");
      });
      b.Region("store", [&] {
        b.Stmt(absl::Substitute(
            "const int block_row = tile / $0 * $1;\n"
            "const int block_col = tile % $0 * $2;\n"
            "C[(block_row + cwg * $3 + (threadIdx.x % 128) / 32) * $4 + block_col + "
            "threadIdx.x % 32] = acc;",
            tiles_n, bm, kBn, kRowsPerConsumer, shape.n));
      });
    });
  };
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", producer},
                                 {"consumer", shape.consumers, "cwg", consumer}});
  return b;
}

absl::StatusOr<Kernel> WarpSpecializedPipeline(const PipelineShape& shape) {
  absl::StatusOr<KernelBuilder> b = WarpSpecializedPipelineBuilder(shape);
  if (!b.ok()) return b.status();
  return b->Build();
}

}  // namespace warptrace
