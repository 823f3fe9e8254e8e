// Kernel: a kernel as KernelBuilder builds it (jit/builder/kernel_builder.h) and validates it
// (jit/builder/kernel_validation.h), the tree of raw statements and structured constructs that
// RecordPlan counts and the emitter turns into CUDA source.
//
// The types here are plain values; a Kernel returned by KernelBuilder::Build() has passed
// validation, its nodes carry their builder paths ("kernel gemm > loop k > region mma") and
// preorder ordinals.
#ifndef WARPTRACE_JIT_BUILDER_KERNEL_H_
#define WARPTRACE_JIT_BUILDER_KERNEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/layout.h"
#include "jit/builder/kernel_source.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

// A C++ expression spelled as text, or an integer literal (whose value the builder knows).
class Expr {
 public:
  Expr(int64_t value);  // NOLINT: implicit on purpose, `For("k", 0, "K", ...)`
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
  // Unsigned counts (a uint32_t size, a size_t) without an ambiguous conversion; a value
  // above INT64_MAX is not representable in the emitted signed arithmetic and wraps.
  Expr(uint32_t value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
  Expr(uint64_t value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
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
  // The loop runs exactly `expr` times in each block, where `expr` (jit/builder/trip_expr.h: C
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
  // PerBlock with the expression the loop's own bounds give: for `For(var, begin, end, step)`
  // whose begin, end and step read only blockIdx, gridDim, blockDim and integer scalar
  // parameters (step > 0), "(end) > (begin) ? ((end) - (begin) + (step) - 1) / (step) : 0".
  //   b.Param("int", "n");
  //   b.For("i", 0, "n", TripCount::PerBlock(), [&] { b.Region("step", ...); });
  // The builder writes the expression when the loop is added (Build() rejects a literal step
  // <= 0); a bound outside that language fails at planning, naming the loop.
  static TripCount PerBlock() { return TripCount(Kind::kPerBlock, 0, ""); }
  // The trip count of `for (v = begin; v < end; v += step)` as a PerBlock expression.
  static std::string BoundsExpr(const std::string& begin, const std::string& end,
                                const std::string& step);
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

// Whether an If's condition is the same for every thread of the block, as far as block
// barriers are concerned (KernelBuilder::If).
enum class Uniform {
  kThread,     // may differ between threads (the default): no Barrier() may sit under it
  kWarpgroup,  // every thread of a warpgroup takes the same side: warpgroup-wide
               // instructions (MmaGroup, WaitMmaGroups, SetMaxRegisters) under it are safe,
               // block barriers are not
  kBlock,      // every thread of the block takes the same side: barriers under it are safe
};

// Who executes an arrival on a phase barrier.
enum class ArriveBy {
  kEveryThread,  // every thread that reaches it (of the role, or of the block outside roles)
  kOneThread,    // the first thread of the role (of the block outside roles) only
  // The first thread of each warpgroup (each warp) of the role, or of the block outside
  // roles: a role of several warpgroups whose warpgroups each arrive once, the exact
  // construct for `if (tid % 128 == 0) arrive` (which the plan can only bound). The role
  // must be whole warpgroups (warps); an arrival brings one thread per warpgroup (warp).
  kOneThreadPerWarpgroup,
  kOneThreadPerWarp,
};

// Threads per arriving thread of `by`: 128 (one per warpgroup), 32 (one per warp), or 1
// for kEveryThread; 0 for kOneThread (one per role, whatever its size).
inline uint32_t ArriveByStride(ArriveBy by) {
  switch (by) {
    case ArriveBy::kEveryThread: return 1;
    case ArriveBy::kOneThread: return 0;
    case ArriveBy::kOneThreadPerWarpgroup: return 128;
    case ArriveBy::kOneThreadPerWarp: return 32;
  }
  return 1;
}

// Who takes an early return together, as far as barriers are concerned.
enum class ReturnScope {
  // Some threads of the block may return and others not (the default): no barrier may
  // run after it, since the threads that returned would never arrive.
  kThread,
  // Every thread of the block takes it or none does: its condition has one value in the
  // whole block (it reads blockIdx, gridDim, blockDim, kernel arguments, memory every
  // thread reads alike such as `seq_lens[blockIdx.y]`, or values all threads computed
  // alike; not threadIdx, nor memory some threads write meanwhile), so barriers after it
  // are safe. Not inside a role split (only the role's threads would return).
  kBlock,
};

// An asynchronous copy of a 2-D tile from global to shared memory: `rows` rows of
// `row_bytes` bytes each, row r read from `src` + r * src_row_stride_bytes and written
// densely to `dst` + r * row_bytes. Both pointers are C++ expressions of any pointer type
// (read as bytes); both must be 16-byte aligned, as must the stride.
//   * No barrier (the default): sm_80 cp.async. The threads of the enclosing role (of the
//     block outside roles) share the 16-byte chunks, then commit one group; the copy is
//     complete for each thread after WaitAsyncCopies().
//   * `barrier` names a phase barrier array (element `barrier_index`): sm_90 bulk copies
//     (cp.async.bulk), issued by the first thread of the role, one per row, completing
//     rows * row_bytes bytes of transactions on phase `barrier_phase` of that element; the
//     phase must expect them (ArriveExpectTx by the issuing thread, before the copy).
//     The issuing thread observes the completion (the end of the copy's async span) as soon
//     as it looks: while it waits in any WaitPhase of its role it polls its copies in flight
//     (test_wait; on the host a wait returns only once complete, so it does not poll), at
//     its next WaitPhase on that element, else when it next issues a copy on the element or
//     leaves the kernel, where it waits for that phase first (at once in a pipeline whose
//     protocol already ordered it: an element is reused only after its phase completed).
//   * `tensor_map` names a kernel parameter of type CUtensorMap (KernelArg::TensorMap):
//     an sm_90 TMA load (cp.async.bulk.tensor) of one box, issued like a bulk copy by the
//     first thread of the role and completing on `barrier`. `coords` are the box's
//     coordinates in elements, innermost first (2 or 3 C++ expressions), `box` the box's
//     extent per dimension as the map encodes it and `element_bytes` its element size (src,
//     rows, row_bytes and the stride are unused). The construct itself adds Bytes() =
//     product(box) * element_bytes expected transactions to the phase (mbarrier.expect_tx)
//     before it issues the copy, so nobody counts bytes by hand: arrive on the element with a
//     plain Arrive (ArriveBy::kOneThread) after the copies, not with ArriveExpectTx. TMA
//     completes the whole box's bytes even where the box is out of bounds (filled).
//     `dst` must be 128-byte aligned (1024 with the 128B swizzle).
struct AsyncCopySpec {
  std::string name;  // the record site's name ("load A")
  std::string dst;
  std::string src;
  uint32_t rows = 1;
  uint32_t row_bytes = 16;  // a positive multiple of 16
  std::string src_row_stride_bytes = "0";
  std::string barrier;              // "" = cp.async group
  std::string barrier_index = "0";  // element of `barrier`
  std::string barrier_phase;        // the phase number the bytes complete (e.g. "k / stages")
  // TMA (see above).
  std::string tensor_map;
  std::vector<std::string> coords;
  std::vector<uint32_t> box;
  uint32_t element_bytes = 2;
  // TMA multicast (sm_90a; the kernel needs Cluster()): a C++ expression of the 16-bit CTA
  // mask (bit r: CTA rank r of the cluster) whose CTAs all receive the box at `dst`'s offset
  // in their shared memory, completing it on their `barrier` element at the same offset
  // (PTX ISA .multicast::cluster). The construct expects Bytes() x popcount(mask) on its own
  // barrier: CUTLASS's symmetric pattern, where every CTA of the mask multicasts one box of
  // the same size to the same mask, so each receives one box from each. Empty: no multicast.
  std::string multicast_mask;
  bool tma() const { return !tensor_map.empty(); }
  uint64_t Bytes() const {
    if (!tma()) return uint64_t{rows} * row_bytes;
    uint64_t bytes = element_bytes;
    for (uint32_t extent : box) bytes *= extent;
    return bytes;
  }
};

// What a cluster barrier construct executes (PTX ISA: "barrier.cluster.arrive{.sem}{.aligned};
// .sem = {.release, .relaxed}" and "barrier.cluster.wait{.acquire}{.aligned}").
enum class ClusterBarrierOp {
  kSync,           // barrier.cluster.arrive.release, then barrier.cluster.wait.acquire
  kArrive,         // barrier.cluster.arrive.release
  kArriveRelaxed,  // barrier.cluster.arrive.relaxed (no memory ordering)
  kWait,           // barrier.cluster.wait.acquire
};

// What SetMaxRegisters does to the warpgroup's register budget (setmaxnreg.inc / .dec).
enum class RegisterChange { kIncrease, kDecrease };
const char* RegisterChangeName(RegisterChange change);  // "inc", "dec" (the PTX qualifier)

// The one list of constructs, X(enumerator, name): KernelNode::Kind and KernelNodeKindName
// come from it. Every stage switches over the kinds exhaustively, with no `default:`, so a
// construct added here fails to compile (-Wswitch under -Werror) in each stage that does
// not handle it yet: the builder's label and requirements, validation, the plan's sites,
// event counts and loop marks, the emitter. The fields each kind uses:
//   kStatement        text: verbatim C++
//   kRegion           text: region name; body; call (a KernelBuilder::Call's region)
//   kLoop             text: loop variable; begin, end, step, trip; body; or, for a loop
//                     head of its own (LoopHead), begin (the init), condition, update
//   kIf               text: condition; body (then), else_body
//   kRoles            axis; roles (each a kRole)
//   kRole             text: role name; first (first warp/warpgroup), count, index_var; body
//   kBarrier          text: barrier name; barrier_record
//   kReturn           return_scope; early return (runs the profiler epilogue first)
//   Warp specialization (all usable inside roles):
//   kNamedBarrier     text: name; barrier_id, threads, named_arrive; barrier_record
//   kArrive           text: barrier array; index, phase, tx_bytes ("" = none), arrive_by,
//                     cta ("" = the own CTA's barrier; else a remote arrival's target rank)
//   kPhaseWait        text: barrier array; index, phase
//   kAsyncCopy        text: copy name; copy
//   kAsyncWait        async_pending: waits until at most that many cp.async groups of the
//                     thread are in flight
//   Tensor cores and registers (sm_90a):
//   kMmaGroup         text: group name; body (the wgmma instructions)
//   kMmaWait          async_pending: wgmma.wait_group
//   kSetMaxRegisters  registers, register_change
//   kTmaStore         text: store name; copy (tensor_map, src, coords)
//   kTmaStoreWait     async_pending: cp.async.bulk.wait_group.read
//   Thread-block clusters (sm_90):
//   kClusterBarrier   text: barrier name; cluster_op; barrier_record
#define WARPTRACE_KERNEL_NODE_KINDS(X)       \
  X(kStatement, "statement")                 \
  X(kRegion, "region")                       \
  X(kLoop, "loop")                           \
  X(kIf, "if")                               \
  X(kRoles, "roles")                         \
  X(kRole, "role")                           \
  X(kBarrier, "barrier")                     \
  X(kReturn, "return")                       \
  X(kNamedBarrier, "named barrier")          \
  X(kArrive, "arrive")                       \
  X(kPhaseWait, "phase wait")                \
  X(kAsyncCopy, "async copy")                \
  X(kAsyncWait, "async wait")                \
  X(kMmaGroup, "mma group")                  \
  X(kMmaWait, "mma wait")                    \
  X(kSetMaxRegisters, "set max registers")   \
  X(kTmaStore, "tma store")                  \
  X(kTmaStoreWait, "tma store wait")         \
  X(kClusterBarrier, "cluster barrier")

// ---------------------------------------------------------------------------------------
// The built, validated kernel: what RecordPlan and the emitter walk.

struct KernelNode {
  enum class Kind {
#define WARPTRACE_KERNEL_NODE_KIND_ENUM(e, name) e,
    WARPTRACE_KERNEL_NODE_KINDS(WARPTRACE_KERNEL_NODE_KIND_ENUM)
#undef WARPTRACE_KERNEL_NODE_KIND_ENUM
  };

  Kind kind = Kind::kStatement;
  std::string text;
  std::string path;      // builder path: "kernel gemm > loop k > region mma"
  uint32_t ordinal = 0;  // preorder index, unique within the kernel: Kernel::num_nodes
  std::vector<KernelNode> body;
  std::vector<KernelNode> else_body;
  bool has_else = false;
  Uniform uniform = Uniform::kThread;  // kIf: whether every thread takes the same side
  bool call = false;  // kRegion: the region of a KernelBuilder::Call (labelled "call NAME")
  // kLoop: `for (int text = begin; text < end; text += step)`, or with a condition
  // `for (int text = begin; condition; update)` (KernelBuilder::LoopHead)
  std::string begin, end, step;
  std::string condition, update;
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
  // kNamedBarrier
  uint32_t barrier_id = 0;
  uint32_t threads = 0;
  bool named_arrive = false;  // bar.arrive (no wait, no record) instead of bar.sync
  // kArrive, kPhaseWait: the barrier array is `text`; expressions as C++ text
  std::string index;
  std::string phase;
  std::string tx_bytes;
  ArriveBy arrive_by = ArriveBy::kEveryThread;
  // kArrive: the rank of the cluster's CTA whose element it arrives on
  // (KernelBuilder::ArriveRemote), or "" for the own CTA's.
  std::string cta;
  // kAsyncCopy, kTmaStore
  AsyncCopySpec copy;
  // kAsyncWait, kMmaWait, kTmaStoreWait: the thread's most recent groups left in flight
  // (0..7)
  uint32_t async_pending = 0;
  // kClusterBarrier
  ClusterBarrierOp cluster_op = ClusterBarrierOp::kSync;
  // kSetMaxRegisters
  uint32_t registers = 0;
  RegisterChange register_change = RegisterChange::kIncrease;
};

const char* KernelNodeKindName(KernelNode::Kind kind);  // "statement", "region", ...

// How a construct is named. kPath: in builder paths and messages ("wait full[s % 4]",
// "if (tid < 32)", "statement `acc += x`"; a path is the kernel's name and the labels of the
// nodes down to it, joined by " > ", and a second loop of one variable in one body is
// labelled "loop k #2" by the builder); kCount: in the plan's record counts, by what records
// ("wait full", "if", and the kind's name for constructs without records).
enum class NodeLabelStyle { kPath, kCount };
std::string KernelNodeLabel(const KernelNode& node, NodeLabelStyle style);

// The one walk over a kernel tree: calls `fn(node)` on every node of `body` and below (its
// body, else body and roles), in preorder. `Body` is a std::vector<KernelNode>, const or
// not (AssignOrdinals numbers nodes through it). A stage whose walk carries context (an
// enclosing span, a role's first thread) uses WalkNodes below.
template <typename Body, typename Fn>
void ForEachNode(Body& body, const Fn& fn) {
  for (auto& node : body) {
    fn(node);
    ForEachNode(node.body, fn);
    ForEachNode(node.else_body, fn);
    ForEachNode(node.roles, fn);
  }
}

// One of a node's nested bodies, as WalkNodes enters it.
struct NestedBody {
  enum Which { kBody, kElseBody, kRoleBody };
  const KernelNode* parent = nullptr;  // the construct whose body this is
  Which which = kBody;
  const KernelNode* role = nullptr;  // kRoleBody: parent->roles[role_index]
  size_t role_index = 0;
};

// The walk that carries context: calls `visit(node, at)` on every node of `body` and below
// in preorder, where `at` (a `Context`) says where the node is; `enter(nested, at)` gives
// the context of each nested body from its parent's. A role split's roles are not visited
// as nodes: each role's body is entered from the split as NestedBody::kRoleBody.
template <typename Context, typename Visit, typename Enter>
void WalkNodes(const std::vector<KernelNode>& body, const Context& at, const Visit& visit,
               const Enter& enter) {
  for (const KernelNode& node : body) {
    visit(node, at);
    if (!node.body.empty()) {
      WalkNodes(node.body, enter(NestedBody{&node, NestedBody::kBody}, at), visit, enter);
    }
    if (!node.else_body.empty()) {
      WalkNodes(node.else_body, enter(NestedBody{&node, NestedBody::kElseBody}, at), visit,
                enter);
    }
    for (size_t i = 0; i < node.roles.size(); ++i) {
      const NestedBody role{&node, NestedBody::kRoleBody, &node.roles[i], i};
      WalkNodes(node.roles[i].body, enter(role, at), visit, enter);
    }
  }
}

// The first node of `body` and below, in preorder, for which `pred(node)` holds, or null.
template <typename Pred>
const KernelNode* FindNode(const std::vector<KernelNode>& body, const Pred& pred) {
  for (const KernelNode& node : body) {
    if (pred(node)) return &node;
    for (const std::vector<KernelNode>* nested : {&node.body, &node.else_body, &node.roles}) {
      if (const KernelNode* found = FindNode(*nested, pred)) return found;
    }
  }
  return nullptr;
}

struct SharedArrayDecl {
  std::string type;  // element type, e.g. "float", "float2", "MyPair"
  std::string name;
  uint64_t count = 0;  // elements: the product of `dims`
  uint32_t element_bytes = 0;
  uint64_t Bytes() const { return count * element_bytes; }
  // The dimensions, outermost first (`name[dims[0]][dims[1]]...`); one entry for a plain
  // array.
  std::vector<uint64_t> dims;
  // The element size was given by the caller for a type the builder does not know: the
  // kernel checks it with static_assert(sizeof(type) == element_bytes) on both backends.
  bool check_element_bytes = false;
  // Declared by a raw `__shared__` in a Stmt (`path` is that statement's): counted in the
  // plan's shared budget, not emitted again (the statement declares it, in its scope).
  bool in_statement = false;
  std::string path;
};

// An array of phase barriers (mbarriers) in shared memory: `__shared__ unsigned long long
// name[size]`, every element initialized at the kernel's start to complete a phase after
// `arrivals` arrivals. Each element has its own block-local barrier id: first_id + i
// (format/links.h), ids numbered over the kernel's arrays in declaration order.
struct PhaseBarrierDecl {
  std::string name;
  uint32_t size = 0;
  uint32_t arrivals = 0;
  uint32_t first_id = 0;
  // With a cluster link scope (a cluster of more than one CTA, format/layout.h
  // LinkScopeOf): the barrier ids each CTA has, so that element i of
  // CTA rank r has the cluster-wide id r x cluster_ids + first_id + i in payloads and the
  // layout's table. 0: ids are the block's own (first_id + i).
  uint32_t cluster_ids = 0;
};

struct DynamicSharedDecl {
  std::string type;    // element type; empty when the kernel declares none
  std::string name;
  uint32_t bytes = 0;  // passed at launch
  // The base address's alignment in bytes (a power of two, 16..1024), the same profiled
  // and unprofiled on both backends: declared `__align__(align)` on a GPU (so the static
  // shared memory profiling adds cannot move it off), honoured by the host's allocation.
  uint32_t align = 128;
};

// Kernel-level code emitted before the kernel (KernelBuilder::Preamble): #include lines,
// constants, types, __device__ helper functions.
struct PreambleDecl {
  std::string code;
  std::string path;  // "kernel gemm > preamble 1"
};

// One part of a block's label (KernelBuilder::BlockLabel): "name value", the value an
// integer expression of blockIdx, gridDim, blockDim, integer scalar parameters and
// constants (jit/builder/trip_expr.h), evaluated on the host for every recorded block.
struct BlockLabelPart {
  std::string name;  // "seq"
  std::string expr;  // "blockIdx.y"
  friend bool operator==(const BlockLabelPart&, const BlockLabelPart&) = default;
};

struct Kernel {
  std::string name;
  std::vector<BlockLabelPart> block_label;  // empty: blocks have no label
  std::vector<PreambleDecl> preamble;  // in the order given
  // Integer constants (KernelBuilder::Constant), also in the preamble as constexpr
  // declarations: per-block trip counts may read them by name.
  std::vector<std::pair<std::string, int64_t>> constants;
  std::vector<KernelParam> params;  // in signature order, without the trace buffer
  Dim3 grid;
  Dim3 block;
  // The thread-block cluster shape (KernelBuilder::Cluster); 1x1x1 without clusters.
  Dim3 cluster;
  bool non_portable_cluster = false;  // ClusterSize::kNonPortable: up to 16 CTAs
  std::string cluster_path;  // "kernel k > cluster 2x1x1", or empty without Cluster()
  std::vector<SharedArrayDecl> shared_arrays;
  DynamicSharedDecl dynamic_shared;
  std::vector<PhaseBarrierDecl> phase_barriers;
  std::vector<KernelNode> body;
  uint32_t num_nodes = 0;
  // What the kernel requires of its CUDA target (jit/target/cuda_target.h): each feature
  // (wgmma, setmaxnreg, TMA, bulk copies, cp.async, mbarrier) with the builder path of its
  // first use, from its constructs (MmaGroup, SetMaxRegisters, AsyncCopy, ...) and the
  // primitives its raw statements call. RunKernel and the CUDA device compile for the
  // target these resolve to on the GPU (sm_90 -> sm_90a for wgmma), or fail naming the
  // construct and the target (wgmma on sm_100). Replaces 0.2.0's `sm90a_use`.
  TargetRequirements requirements;
  // The first raw statement or preamble (builder path) naming a device primitive
  // (warptrace_mma_m16n8k16_*, warptrace_ldmatrix_*, ...: any warptrace_* identifier), or
  // empty: the emitter then includes warptrace_primitives.cuh for it.
  std::string primitives_use;
  // Emit __launch_bounds__(threads per block, 1), fixing the register count at entry so that
  // ptxas honours setmaxnreg (set when the kernel uses SetMaxRegisters).
  bool fixed_register_count = false;
  // KernelBuilder::MinBlocksPerSm: __launch_bounds__(threads per block, this); 0: none.
  uint32_t min_blocks_per_sm = 0;
  // The phase barrier array named `name`, or null.
  const PhaseBarrierDecl* FindPhaseBarriers(const std::string& name) const;
  // Static shared bytes declared through SharedArray() and PhaseBarriers().
  uint64_t StaticSharedBytes() const;
  uint64_t ThreadsPerBlock() const { return block.Count(); }
};


}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_KERNEL_H_
