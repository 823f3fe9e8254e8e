// Kernel: a kernel as KernelBuilder builds it (jit/kernel_builder.h) and validates it
// (jit/kernel_validation.h), the tree of raw statements and structured constructs that
// RecordPlan counts and the emitter turns into CUDA source.
//
// The types here are plain values; a Kernel returned by KernelBuilder::Build() has passed
// validation, its nodes carry their builder paths ("kernel gemm > loop k > region mma") and
// preorder ordinals.
#ifndef WARPTRACE_JIT_KERNEL_H_
#define WARPTRACE_JIT_KERNEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jit/kernel_source.h"
#include "profiler/trace/layout.h"

namespace warptrace {

// A C++ expression spelled as text, or an integer literal (whose value the builder knows).
class Expr {
 public:
  Expr(int64_t value);  // NOLINT: implicit on purpose, `For("k", 0, "K", ...)`
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
  Expr(std::string text);                                 // NOLINT
  Expr(const char* text) : Expr(std::string(text)) {}     // NOLINT

  const std::string& text() const { return text_; }
  bool is_literal() const { return is_literal_; }
  int64_t literal() const { return literal_; }

 private:
  std::string text_;
  bool is_literal_ = false;
  int64_t literal_ = 0;
};

// How many times a loop runs, as far as the plan is concerned.
class TripCount {
 public:
  enum class Kind { kExact, kUpperBound, kPerBlock, kUnknown };
  // The loop runs exactly n times (known at JIT time).
  static TripCount Exact(uint64_t n) { return TripCount(Kind::kExact, n, ""); }
  // The loop runs at most n times. The plan sizes for n; if the bound is wrong, extra events
  // are counted as dropped, never written over a neighbour.
  static TripCount UpperBound(uint64_t n) { return TripCount(Kind::kUpperBound, n, ""); }
  // The loop runs exactly `expr` times in each block, where `expr` (jit/trip_expr.h: C
  // integer arithmetic, min/max, ?:) reads blockIdx, gridDim, blockDim and the kernel's
  // integer scalar parameters by name. It is evaluated for every block when the kernel is
  // launched (RecordPlan::Create with the launch's scalars), so a persistent kernel's tile
  // loop is planned exactly per block and the buffer is sized per launch:
  //   b.For("tile", "blockIdx.x", "num_tiles", "gridDim.x", TripCount::PerBlock(
  //       "blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0"), ...);
  // A value below 0 at launch is an error. If the expression is wrong, extra events are
  // counted as dropped, never written over a neighbour.
  static TripCount PerBlock(std::string expr) {
    return TripCount(Kind::kPerBlock, 0, std::move(expr));
  }
  // Nothing is known: no record site may be placed inside such a loop.
  static TripCount Unknown() { return TripCount(Kind::kUnknown, 0, ""); }

  Kind kind() const { return kind_; }
  // n for kExact / kUpperBound; 0 for kPerBlock (see RecordPlan) and kUnknown.
  uint64_t count() const { return count_; }
  const std::string& expr() const { return expr_; }  // kPerBlock's expression
  bool bounded() const { return kind_ != Kind::kUnknown; }

 private:
  TripCount(Kind kind, uint64_t count, std::string expr)
      : kind_(kind), count_(count), expr_(std::move(expr)) {}
  Kind kind_;
  uint64_t count_;
  std::string expr_;
};

// The index a role split divides the block's threads by.
enum class RoleAxis {
  kWarpgroup,  // warpgroup = linear thread id / 128
  kWarp,       // warp = linear thread id / 32
};
const char* RoleAxisName(RoleAxis axis);  // "warpgroup", "warp"
uint32_t RoleAxisThreads(RoleAxis axis);  // 128, 32

// Whether a barrier gets a barrier-wait record site (arrival to release).
enum class BarrierRecord {
  kByPolicy,  // when RecordPolicy::barrier_waits is on
  kAlways,    // always (an error inside a loop of unknown trip count, see RecordPlan)
  kNever,
};

// Who takes an early return together, as far as barriers are concerned.
enum class ReturnScope {
  // Some threads of the block may return and others not (the default): no barrier may
  // run after it, since the threads that returned would never arrive.
  kThread,
  // Every thread of the block takes it or none does (its condition depends only on
  // blockIdx, gridDim and kernel arguments), so barriers after it are safe. Not inside a
  // role split (only the role's threads would return).
  kBlock,
};

// ---------------------------------------------------------------------------------------
// The built, validated kernel: what RecordPlan and the emitter walk.

struct KernelNode {
  enum class Kind {
    kStatement,  // text: verbatim C++
    kRegion,     // text: region name; body
    kLoop,       // text: loop variable; begin, end, step, trip; body
    kIf,         // text: condition; body (then), else_body
    kRoles,      // axis; roles (each a kRole)
    kRole,       // text: role name; first (first warp/warpgroup), count, index_var; body
    kBarrier,    // text: barrier name; barrier_record
    kReturn,     // return_scope; early return (runs the profiler epilogue first)
  };
  Kind kind = Kind::kStatement;
  std::string text;
  std::string path;      // builder path: "kernel gemm > loop k > region mma"
  uint32_t ordinal = 0;  // preorder index, unique within the kernel: Kernel::num_nodes
  std::vector<KernelNode> body;
  std::vector<KernelNode> else_body;
  bool has_else = false;
  // kLoop
  std::string begin, end, step;
  TripCount trip = TripCount::Unknown();
  // kRoles
  RoleAxis axis = RoleAxis::kWarpgroup;
  std::vector<KernelNode> roles;
  // kRole
  uint32_t first = 0;
  uint32_t count = 0;
  std::string index_var;
  // kBarrier
  BarrierRecord barrier_record = BarrierRecord::kByPolicy;
  // kReturn
  ReturnScope return_scope = ReturnScope::kThread;
};

const char* KernelNodeKindName(KernelNode::Kind kind);  // "statement", "region", ...

struct SharedArrayDecl {
  std::string type;  // element type, e.g. "float"
  std::string name;
  uint64_t count = 0;
  uint32_t element_bytes = 0;
  uint64_t Bytes() const { return count * element_bytes; }
};

struct DynamicSharedDecl {
  std::string type;    // element type; empty when the kernel declares none
  std::string name;
  uint32_t bytes = 0;  // passed at launch
};

struct Kernel {
  std::string name;
  std::vector<KernelParam> params;  // in signature order, without the trace buffer
  Dim3 grid;
  Dim3 block;
  std::vector<SharedArrayDecl> shared_arrays;
  DynamicSharedDecl dynamic_shared;
  std::vector<KernelNode> body;
  uint32_t num_nodes = 0;
  // Static shared bytes declared through SharedArray().
  uint64_t StaticSharedBytes() const;
  uint64_t ThreadsPerBlock() const { return block.Count(); }
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNEL_H_
