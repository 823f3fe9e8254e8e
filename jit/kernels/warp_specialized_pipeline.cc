#include "jit/kernels/warp_specialized_pipeline.h"

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "base/status_macros.h"
#include "jit/kernels/busy_work.h"

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

}  // namespace

uint32_t PipelineTiles(const PipelineShape& shape) {
  const uint32_t bm = kRowsPerConsumer * shape.consumers;
  return bm == 0 ? 0 : (shape.m / bm) * (shape.n / kBn);
}

namespace {

// Writes the pipeline into a KernelBuilder: the declarations, then the producer's and the
// consumers' role bodies.
class PipelineWriter {
 public:
  PipelineWriter(const PipelineShape& shape, KernelBuilder& b)
      : shape_(shape),
        b_(b),
        bm_(kRowsPerConsumer * shape.consumers),
        kt_(shape.k / kBk),
        stage_floats_((bm_ + kBn) * kBk),
        tiles_(PipelineTiles(shape)),
        tiles_n_(shape.n / kBn),
        bulk_(shape.copy == CopyKind::kBulk) {}

  void Declarations() {
    const uint32_t s = shape_.stages;
    b_.Param("const float*", "A").Param("const float*", "B").Param("float*", "C");
    if (shape_.persistent_blocks > 0) {
      b_.Grid({shape_.persistent_blocks, 1, 1});
    } else {
      b_.Grid({tiles_n_, shape_.m / bm_, 1});
    }
    b_.Block({128 * (1 + shape_.consumers), 1, 1});
    b_.DynamicShared("float", "stages", s * stage_floats_ * 4);
    b_.PhaseBarriers("full", s, bulk_ ? 1 : 128);
    b_.PhaseBarriers("empty", s, 128 * shape_.consumers);
  }

  void Producer() {
    ForEachTile([&] {
      ForEachKTile(/*producer=*/true, [&] {
        b_.WaitPhase("empty", "stage", "phase");
        b_.Region("load", [&] {
          if (shape_.producer_delay > 0) b_.Stmt(BusyWork(shape_.producer_delay));
          if (bulk_) {
            b_.ArriveExpectTx("full", "stage", "phase",
                              static_cast<int64_t>(stage_floats_ * 4), ArriveBy::kOneThread);
          }
          Copy("A tile", absl::StrCat("stages + stage * ", stage_floats_),
               absl::StrCat("A + block_row * ", shape_.k, " + kt * ", kBk), bm_, shape_.k);
          Copy("B tile", absl::StrCat("stages + stage * ", stage_floats_, " + ", bm_ * kBk),
               absl::StrCat("B + kt * ", kBk * shape_.n, " + block_col"), kBk, shape_.n);
          if (!bulk_) {
            b_.WaitAsyncCopies();
            b_.Arrive("full", "stage", "phase");
          }
        });
      });
    });
  }

  void Consumer() {
    const uint32_t s = shape_.stages;
    b_.For("first", 0, static_cast<int64_t>(s), TripCount::Exact(s),
           [&] { b_.Arrive("empty", "first", 0); });
    ForEachTile([&] {
      b_.Stmt("float acc = 0.0f;");
      ForEachKTile(/*producer=*/false, [&] {
        b_.WaitPhase("full", "stage", "phase");
        b_.Region("mma", [&] {
          if (shape_.consumer_delay > 0) b_.Stmt(BusyWork(shape_.consumer_delay));
          b_.Stmt(absl::Substitute(
              "const float* sa = stages + stage * $0;\n"
              "const float* sb = sa + $1;\n"
              "const int r = cwg * $2 + (threadIdx.x % 128) / 32;\n"
              "const int c = threadIdx.x % 32;\n"
              "for (int kk = 0; kk < $3; ++kk) {\n"
              "  acc = fmaf(sa[r * $3 + kk], sb[kk * $4 + c], acc);\n"
              "}",
              stage_floats_, bm_ * kBk, kRowsPerConsumer, kBk, kBn));
        });
        b_.Arrive("empty", "stage", "phase + 1");
      });
      b_.Region("store", [&] {
        b_.Stmt(absl::StrCat(TileOrigin(), "\n",
                             absl::Substitute("C[(block_row + cwg * $0 + (threadIdx.x % 128) / "
                                              "32) * $1 + block_col + threadIdx.x % 32] = acc;",
                                              kRowsPerConsumer, shape_.n)));
      });
    });
  }

 private:
  // Runs `body` for each of the block's tiles, with `tile` (its index) and `tile_iter` (the
  // block's count of tiles before it) in scope.
  void ForEachTile(const std::function<void()>& body) {
    if (shape_.persistent_blocks == 0) {
      b_.Stmt("const int tile = blockIdx.x + blockIdx.y * gridDim.x;\nconst int tile_iter = 0;");
      body();
      return;
    }
    const std::string count = absl::Substitute(
        "blockIdx.x < $0 ? ($0 - 1 - blockIdx.x) / gridDim.x + 1 : 0", tiles_);
    b_.For("tile", "blockIdx.x", static_cast<int64_t>(tiles_), "gridDim.x",
           TripCount::PerBlock(count), [&] {
             b_.Stmt("const int tile_iter = (tile - static_cast<int>(blockIdx.x)) / "
                     "static_cast<int>(gridDim.x);");
             body();
           });
  }

  // Runs `body` for each K-tile of the tile, with the ring's use `it`, its `stage` and
  // `phase` in scope; the producer also gets the tile's `block_row` and `block_col`.
  void ForEachKTile(bool producer, const std::function<void()>& body) {
    b_.For("kt", 0, static_cast<int64_t>(kt_), TripCount::Exact(kt_), [&] {
      b_.Stmt(absl::Substitute(
          "const unsigned int it = static_cast<unsigned int>(tile_iter * $0 + kt);\n"
          "const unsigned int stage = it % $1u;\n"
          "const unsigned int phase = it / $1u;",
          kt_, shape_.stages));
      if (producer) b_.Stmt(TileOrigin());
      body();
    });
  }

  // `block_row` and `block_col`: the first row and column of C in tile `tile`.
  std::string TileOrigin() const {
    return absl::Substitute(
        "const int block_row = tile / $0 * $1;\nconst int block_col = tile % $0 * $2;",
        tiles_n_, bm_, kBn);
  }

  // Copies `rows` rows of 32 floats, `stride_floats` apart in global memory, into a stage:
  // cp.async, or a bulk copy completing on full[stage].
  void Copy(const char* name, const std::string& dst, const std::string& src, uint32_t rows,
            uint32_t stride_floats) {
    AsyncCopySpec spec;
    spec.name = name;
    spec.dst = dst;
    spec.src = src;
    spec.rows = rows;
    spec.row_bytes = kBk * 4;
    spec.src_row_stride_bytes = absl::StrCat(stride_floats * 4);
    if (bulk_) {
      spec.barrier = "full";
      spec.barrier_index = "stage";
      spec.barrier_phase = "phase";
    }
    b_.AsyncCopy(spec);
  }

  const PipelineShape& shape_;
  KernelBuilder& b_;
  const uint32_t bm_;            // rows of C per tile
  const uint32_t kt_;            // K-tiles
  const uint32_t stage_floats_;  // floats per stage: the A tile, then the B tile
  const uint32_t tiles_;
  const uint32_t tiles_n_;       // tiles along N
  const bool bulk_;
};

}  // namespace

absl::StatusOr<KernelBuilder> WarpSpecializedPipelineBuilder(const PipelineShape& shape) {
  RETURN_IF_ERROR(CheckShape(shape));
  KernelBuilder b("warp_specialized_pipeline");
  PipelineWriter writer(shape, b);
  writer.Declarations();
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] { writer.Producer(); }},
           {"consumer", shape.consumers, "cwg", [&] { writer.Consumer(); }}});
  return b;
}

absl::StatusOr<Kernel> WarpSpecializedPipeline(const PipelineShape& shape) {
  ASSIGN_OR_RETURN(const KernelBuilder b, WarpSpecializedPipelineBuilder(shape));
  return b.Build();
}

}  // namespace warptrace
