// TripExpr: the arithmetic of a per-block trip count (TripCount::PerBlock), parsed once and
// evaluated on the host for every block of a launch, so that RecordPlan knows exactly how
// many times a persistent kernel's tile loop runs in each block before the kernel starts.
//
//   // The tiles block b takes in `for (t = blockIdx.x; t < num_tiles; t += gridDim.x)`:
//   ASSIGN_OR_RETURN(TripExpr e, TripExpr::Parse(
//       "blockIdx.x < num_tiles ? (num_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0"));
//   e.scalars();                       // {"num_tiles"}
//   TripExprEnv env;
//   env.grid_dim = {8, 1, 1};
//   env.block_idx = {3, 0, 0};
//   env.scalars = {20};                // in the order of e.scalars()
//   e.Evaluate(env);                   // 3: tiles 3, 11, 19
//
// The language is C's integer arithmetic on 64-bit signed values, a subset that means the
// same on the host and in CUDA: decimal literals; blockIdx / gridDim / blockDim with .x .y
// .z; identifiers (the kernel's integer scalar parameters); unary -; * / % (truncating, as
// in C); + -; < <= > >= == != (1 or 0); && ||; ?: ; min(a, b), max(a, b); parentheses.
//
// Errors: Parse returns InvalidArgument naming the position and what was expected.
// Evaluate returns InvalidArgument for a division or remainder by zero and OutOfRange for a
// result or intermediate outside int64.
//
// Thread-safety: an immutable value; Evaluate is const and may run concurrently.
#ifndef WARPTRACE_JIT_TRIP_EXPR_H_
#define WARPTRACE_JIT_TRIP_EXPR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "format/layout.h"

namespace warptrace {

// What a TripExpr reads: the block's coordinates, the launch shape and the scalar values
// (one per TripExpr::scalars() entry, in that order).
struct TripExprEnv {
  Dim3 block_idx;
  Dim3 grid_dim;
  Dim3 block_dim;
  std::vector<int64_t> scalars;
};

class TripExpr {
 public:
  static absl::StatusOr<TripExpr> Parse(std::string_view text);

  absl::StatusOr<int64_t> Evaluate(const TripExprEnv& env) const;

  const std::string& text() const { return text_; }
  // The identifiers other than blockIdx / gridDim / blockDim, in order of first use.
  const std::vector<std::string>& scalars() const { return scalars_; }
  // Whether the value can differ between blocks (it reads blockIdx).
  bool reads_block_idx() const { return reads_block_idx_; }

  // One node of the parsed tree (children by index into the node array; the root is the
  // last node). Public only so the parser in the .cc can build it.
  struct Op {
    enum class Kind : uint8_t {
      kLiteral, kBuiltin, kScalar, kNeg, kNot, kBinary, kSelect, kMin, kMax,
    };
    Kind kind = Kind::kLiteral;
    char binary = 0;  // kBinary: '+', '-', '*', '/', '%', '<', 'l' (<=), '>', 'g' (>=),
                      // '=' (==), '!' (!=), '&' (&&), '|' (||)
    int64_t value = 0;  // kLiteral: the value; kBuiltin: 0..8; kScalar: index in scalars()
    int a = -1, b = -1, c = -1;  // operands (kSelect: condition, then, else)
  };

 private:
  std::string text_;
  std::vector<std::string> scalars_;
  std::vector<Op> ops_;
  bool reads_block_idx_ = false;

  absl::StatusOr<int64_t> Eval(int node, const TripExprEnv& env) const;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_TRIP_EXPR_H_
