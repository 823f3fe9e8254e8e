// KernelBuilder: describe a CUDA kernel once, as a tree of raw statements and structured
// constructs (regions, loops, branches, role splits, barriers, early returns), so that
// warptrace can insert record points and count them before anything runs.
//
//   KernelBuilder b("gemm");
//   b.Param("const float*", "A").Param("const float*", "B").Param("float*", "C");
//   b.Grid({8, 8, 1}).Block({256, 1, 1});
//   b.SharedArray("float", "As", 32 * 32);
//   b.Stmt("float acc = 0.0f;");
//   b.For("k", 0, "K / 32", TripCount::Exact(64), [&] {
//     b.Region("load", [&] { b.Stmt("As[threadIdx.x] = A[...];"); });
//     b.Barrier();
//     b.Region("mma", [&] { b.Stmt("acc += ...;"); });
//     b.Barrier();
//   });
//   b.Stmt("C[...] = acc;");
//   ASSIGN_OR_RETURN(Kernel kernel, b.Build());
//
// Every construct has a lambda form (`Region(name, fn)`) and a fluent form
// (`BeginRegion(name)` ... `EndRegion()`), handy for code that generates kernels. Nothing
// fails while building: the first misuse is remembered with the builder path where it
// happened ("kernel gemm > loop k > region mma") and `Build()` returns it.
//
// What the builder needs from raw statements: they are copied verbatim into the kernel
// body, so they must be complete C++ statements in the CUDA subset listed in
// jit/kernel_source.h, must not `return` (use Return(), which runs the profiler
// epilogue), must not declare `extern __shared__` memory (use DynamicShared()) and must not
// jump (break/continue/goto) out of a builder construct. Shared arrays declared with
// SharedArray() count against the shared-memory budget the plan uses for auto placement;
// `__shared__` arrays written in raw statements are invisible to it.
//
// Thread-safety: a KernelBuilder is not thread-safe. A built Kernel is an immutable value.
#ifndef WARPTRACE_JIT_KERNEL_BUILDER_H_
#define WARPTRACE_JIT_KERNEL_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/kernel_source.h"
#include "profiler/layout.h"

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
  kAlways,
  kNever,
};

// One role of a role split: `count` consecutive warps/warpgroups, in the order given.
struct Role {
  std::string name;
  uint32_t count = 1;
  // Optional: an `int` variable, visible in the role's body, holding the index of the
  // thread's warp/warpgroup within the role (0 .. count-1).
  std::string index_var;
  std::function<void()> body;
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
    kReturn,     // early return (runs the profiler epilogue first)
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

// ---------------------------------------------------------------------------------------

class KernelBuilder {
 public:
  // `name` becomes the `extern "C"` kernel symbol: a C identifier, not a keyword, not
  // starting with "warptrace_" or "__".
  explicit KernelBuilder(std::string name);

  // Appends a parameter. `type` is a pointer type ("const float*", "int*") or one of the
  // scalars bool, char, signed/unsigned char, short, unsigned short, int, unsigned int,
  // unsigned, long long, unsigned long long, float, double.
  KernelBuilder& Param(std::string type, std::string name);
  KernelBuilder& Grid(Dim3 grid);
  KernelBuilder& Block(Dim3 block);
  // A static shared array `__shared__ <type> <name>[count];` at the top of the kernel.
  // `type` is one of the scalar types above.
  KernelBuilder& SharedArray(std::string type, std::string name, uint64_t count);
  // Dynamic shared memory of `bytes` bytes seen as `<type> <name>[]`, declared with
  // WARPTRACE_DYNAMIC_SHARED at the top of the kernel. At most one per kernel.
  KernelBuilder& DynamicShared(std::string type, std::string name, uint32_t bytes);

  // Verbatim C++ statement(s); see the file comment for what they may not do.
  KernelBuilder& Stmt(std::string code);

  // A named region: a record site with an enter and an exit event around `body`.
  KernelBuilder& Region(std::string name, const std::function<void()>& body);
  KernelBuilder& BeginRegion(std::string name);
  // Closes the innermost open construct, which must be a region (named `name` if given).
  KernelBuilder& EndRegion(std::string name = "");

  // `for (int var = begin; var < end; var += step) body`.
  KernelBuilder& For(std::string var, Expr begin, Expr end, TripCount trip,
                     const std::function<void()>& body);
  KernelBuilder& For(std::string var, Expr begin, Expr end, Expr step, TripCount trip,
                     const std::function<void()>& body);
  KernelBuilder& BeginFor(std::string var, Expr begin, Expr end, Expr step, TripCount trip);
  KernelBuilder& EndFor();

  // `if (condition) then_body else else_body`. The plan takes the larger side.
  KernelBuilder& If(std::string condition, const std::function<void()>& then_body);
  KernelBuilder& If(std::string condition, const std::function<void()>& then_body,
                    const std::function<void()>& else_body);
  KernelBuilder& BeginIf(std::string condition);
  KernelBuilder& Else();
  KernelBuilder& EndIf();

  // Splits the block's warps or warpgroups into roles, in order: with {producer 1,
  // consumer 2} by warpgroup, warpgroup 0 runs producer and warpgroups 1-2 consumer. The
  // roles must cover the block exactly. Role splits do not nest, and a role body may not
  // contain a barrier (only part of the block would arrive).
  KernelBuilder& Roles(RoleAxis axis, std::vector<Role> roles);
  KernelBuilder& BeginRoles(RoleAxis axis);
  KernelBuilder& BeginRole(std::string name, uint32_t count, std::string index_var = "");
  KernelBuilder& EndRole();
  KernelBuilder& EndRoles();

  // `__syncthreads()`. With a barrier-wait site (per `record`), the wait from arrival to
  // release is recorded under `name`.
  KernelBuilder& Barrier(std::string name = "barrier",
                         BarrierRecord record = BarrierRecord::kByPolicy);

  // An early return of the thread. When profiled, the exits of every enclosing record site
  // and the profiler epilogue run first. It must be the last thing in its body.
  KernelBuilder& Return();

  // Validates and returns the kernel, or the first misuse. InvalidArgument, with the
  // builder path, for: an invalid or reserved identifier (kernel, parameter, shared
  // array, loop variable, role index variable), a name declared twice, an unknown
  // parameter or shared element type, a grid or block dimension of 0 or a block over 1024
  // threads, an empty kernel, a construct left open or closed out of order, a region name
  // reused with another meaning (as another kind of site, or nested in itself), a loop
  // whose exact trip count contradicts its literal bounds, roles that do not cover the
  // block or whose block size is not a whole number of warps/warpgroups, a nested role
  // split, a barrier inside a role, statements after a Return, a raw statement that
  // returns or declares extern shared memory, shared memory over the device limits.
  absl::StatusOr<Kernel> Build() const;

 private:
  // An open construct; moved into its parent's body when closed.
  struct Frame {
    KernelNode node;
    std::string label;  // "region mma", as it appears in paths
    bool in_else = false;
  };
  void Fail(const std::string& message);
  std::string Path() const;
  // The body new nodes go to, or null (with an error) where none may go.
  std::vector<KernelNode>* CurrentBody(const char* what);
  void Append(KernelNode node, const std::string& label);
  void Open(KernelNode node, const std::string& label);
  // Closes the innermost frame, which must be of `kind`; null (with an error) otherwise.
  bool Close(KernelNode::Kind kind, const char* what, const std::string& name = "");

  Kernel kernel_;
  std::string error_;
  std::vector<Frame> open_;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNEL_BUILDER_H_
