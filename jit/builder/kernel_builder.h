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
// jit/builder/kernel_source.h with balanced brackets, must not `return` from the kernel (use
// Return(), which runs the profiler epilogue; a `return` inside a lambda is fine), must
// not declare `extern __shared__` memory (use DynamicShared()) and must not jump
// (break/continue/goto) out of themselves: the jump would skip the exit events of the
// builder constructs around it. Build() checks all of this on the statement's tokens
// (jit/builder/cpp_snippet.h), so comments and string literals do not count. Shared arrays
// declared with SharedArray() count against the shared-memory budget the plan uses for
// auto placement; `__shared__` arrays written in raw statements are invisible to it, so
// declare them with SharedArray (any element type, any number of dimensions).
//
// Thread-safety: a KernelBuilder is not thread-safe. A built Kernel is an immutable value.
#ifndef WARPTRACE_JIT_BUILDER_KERNEL_BUILDER_H_
#define WARPTRACE_JIT_BUILDER_KERNEL_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/builder/kernel_source.h"

namespace warptrace {

// One role of a role split: `count` consecutive warps/warpgroups, in the order given.
struct Role {
  std::string name;
  uint32_t count = 1;
  // Optional: an `int` variable, visible in the role's body, holding the index of the
  // thread's warp/warpgroup within the role (0 .. count-1).
  std::string index_var;
  std::function<void()> body;
};

// How many CTAs a cluster may have (KernelBuilder::Cluster).
enum class ClusterSize {
  kPortable,     // at most 8: every GPU with clusters runs it
  kNonPortable,  // at most 16: the kernel opts in (H100 and H200 run 16; others may not)
};

class KernelBuilder {
 public:
  // `name` becomes the `extern "C"` kernel symbol: a C identifier, not a keyword, not
  // starting with "warptrace_" or "__".
  explicit KernelBuilder(std::string name);

  // Appends a parameter. `type` is a pointer type ("const float*", "int*") or one of the
  // scalars bool, char, signed/unsigned char, short, unsigned short, int, unsigned int,
  // unsigned, long long, unsigned long long, float, double, each optionally cv-qualified
  // ("const int": the qualifiers stay in the signature), or "CUtensorMap": a TMA tensor map,
  // emitted `const __grid_constant__ CUtensorMap name` and passed a KernelArg::TensorMap
  // (the kernel hands `&name` to warptrace_tma_load_2d and friends).
  KernelBuilder& Param(std::string type, std::string name);
  KernelBuilder& Grid(Dim3 grid);
  KernelBuilder& Block(Dim3 block);
  // The occupancy the kernel is written for: `__launch_bounds__(threads per block, blocks)`,
  // so ptxas keeps the registers per thread within what `blocks` resident blocks per SM
  // leave (65536 / (threads x blocks), rounded down to a multiple of 8; ptxas spills
  // rather than exceed it). Profiled or not, the kernel then keeps that occupancy: without
  // a bound ptxas picks its register count freely, and instrumentation can move it by tens
  // of registers either way. 1..32; a kernel using SetMaxRegisters must say 1 (or nothing).
  KernelBuilder& MinBlocksPerSm(uint32_t blocks);
  // Launches the grid as thread-block clusters of `shape` CTAs (sm_90+; the kernel then
  // requires TargetFeature::kClusters, and Resolve() on an older target fails naming this
  // call's path, "kernel k > cluster 2x1x1", and the target). The CTAs of a cluster are
  // co-scheduled, reach each other's shared memory and synchronize on the cluster barrier
  // (jit/primitives/cluster_sm90.cuh). Build() checks that every dimension is >= 1 and
  // divides the grid's, and that the cluster has at most 8 CTAs (the portable size), or 16
  // with ClusterSize::kNonPortable (the launch then sets
  // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED). At most one call.
  //   b.Grid({132, 1, 1}).Block({384, 1, 1}).Cluster({2, 1, 1});
  KernelBuilder& Cluster(Dim3 shape, ClusterSize size = ClusterSize::kPortable);
  // A static shared array `__shared__ <type> <name>[count];` at the top of the kernel,
  // counted in the plan's shared budget. `type` is one of the scalar types above or a CUDA
  // vector type (float2, int4, __half2, ...); see the overload for any other.
  KernelBuilder& SharedArray(std::string type, std::string name, uint64_t count);
  // The same with any number of dimensions, outermost first: `__shared__ float2
  // q_vecs[4][8];` is SharedArray("float2", "q_vecs", {4, 8}). A type the builder does not
  // know (a struct of the preamble) takes its element size, which the kernel checks with
  // static_assert(sizeof(type) == element_bytes) under NVRTC and on the host alike:
  //   b.Preamble("struct Pair { float v; int i; };");
  //   b.SharedArray("Pair", "best", {8, 32}, /*element_bytes=*/8);
  // Build() rejects a dimension of 0, no dimensions, a size that overflows, an unknown type
  // without its size, a known type with another size, and a type that is not a type name.
  KernelBuilder& SharedArray(std::string type, std::string name, std::vector<uint64_t> dims,
                             uint32_t element_bytes = 0);
  // Dynamic shared memory of `bytes` bytes seen as `<type> <name>[]`, declared with
  // WARPTRACE_DYNAMIC_SHARED_ALIGNED at the top of the kernel. At most one per kernel.
  // `align`: the base address's alignment, a power of two from 16 to 1024 (128B-swizzled
  // TMA boxes and the wgmma descriptors reading them need 1024). The base has it profiled
  // and unprofiled, on a GPU and on the host: profiling adds static shared memory, which
  // would otherwise move a GPU's dynamic base, so it is declared `__align__(align)`.
  KernelBuilder& DynamicShared(std::string type, std::string name, uint32_t bytes,
                               uint32_t align = 128);

  // Verbatim C++ statement(s); see the file comment for what they may not do.
  KernelBuilder& Stmt(std::string code);

  // Kernel-level code, emitted verbatim before the kernel (in the order given, on both
  // backends): #include lines (warptrace embeds <math_constants.h> for CUDA's CUDART_*
  // constants; other headers must exist for NVRTC and the host compiler alike), constants
  // (constexpr, #define), types and __device__ helper functions:
  //   b.Preamble("#include <math_constants.h>\n"
  //              "__device__ float Sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }");
  // Checked like a Stmt's tokens: balanced brackets, terminated comments and literals, no
  // extern shared memory; and no __global__ function (one kernel per builder). A helper
  // may not call Barrier()-style builder constructs (it is plain code: no record sites)
  // and must not declare `__shared__` memory. May be called anywhere before Build().
  KernelBuilder& Preamble(std::string code);
  // An integer constant of the kernel: `constexpr int name = value;` (long long beyond int)
  // before the kernel, like a Preamble, which per-block trip counts (TripCount::PerBlock)
  // may also read by name, so tile math is written once:
  //   b.Constant("kTileM", 128).Param("int", "m");
  //   b.For("t", "blockIdx.x", "(m + kTileM - 1) / kTileM", "gridDim.x",
  //         TripCount::PerBlock("blockIdx.x < (m + kTileM - 1) / kTileM ? ... : 0"), ...);
  // Build() checks the name like a parameter's (an identifier, declared once).
  KernelBuilder& Constant(std::string name, int64_t value);
  // A label for every block, shown on its timeline tracks ("block (0,3,1) [seq 3 /
  // partition 1] warp 0") and wherever the diagnosis names a block: the parts "name value"
  // joined by " / ", each value an expression in the TripCount::PerBlock language (blockIdx,
  // gridDim, blockDim, integer scalar parameters, constants; trip_expr.h), evaluated on the
  // host for each recorded block when the kernel is launched. A part whose expression is
  // exactly blockIdx.x, .y or .z also names that grid dimension in the diagnosis
  // ("imbalance by blockIdx.y (seq)"):
  //   b.BlockLabel({{"head", "blockIdx.x"}, {"seq", "blockIdx.y"},
  //                 {"partition", "blockIdx.z"}});
  // Build() rejects a second call, no parts, a name that is empty or has characters other
  // than letters, digits, spaces, _ . : -, and an expression that does not parse; planning
  // rejects one that reads a pointer or floating-point parameter or fails to evaluate.
  KernelBuilder& BlockLabel(std::vector<BlockLabelPart> parts);

  // A named region: a record site with an enter and an exit event around `body`.
  // A region is a C++ scope (`{ ... }` in the emitted code), like every construct with a
  // body: a variable declared in it is invisible after it, so declare what later code reads
  // before the region (`b.Stmt("float acc = 0.0f;")`) and assign it inside. The name is shown
  // in the timeline: 1 to 64 characters, letters, digits, spaces (not leading or trailing)
  // and _ . : / -; Build() rejects any other.
  KernelBuilder& Region(std::string name, const std::function<void()>& body);
  KernelBuilder& BeginRegion(std::string name);
  // Closes the innermost open construct, which must be a region (named `name` if given).
  KernelBuilder& EndRegion(std::string name = "");

  // `for (int var = begin; var < end; var += step) body`.
  KernelBuilder& For(std::string var, Expr begin, Expr end, TripCount trip,
                     const std::function<void()>& body);
  // A loop of any head: `for (int var = init; condition; update) body`, for what the form
  // above cannot say: halving, shifting, counting down.
  //   b.For({"i", "kWarps", "i > 1", "i /= 2"}, TripCount::Exact(3), [&] {
  //     b.Stmt("if (lane < i / 2) red[lane] += red[lane + i / 2];");
  //     b.Barrier("halved");
  //   });
  // The trip count is declared as for the form above (TripCount::PerBlock needs its
  // expression: the bounds do not give it). Build() checks Exact and UpperBound by running
  // the head when init is a literal, the condition compares the variable with a literal
  // (<, <=, >, >=, !=) and the update is one of ++, --, +=, -=, *=, /=, <<=, >>= by a
  // literal; other heads are taken as declared (and checked per thread on the host backend,
  // as every Exact loop).
  struct LoopHead {
    std::string var;
    Expr init;
    std::string condition;
    std::string update;
  };
  KernelBuilder& For(LoopHead head, TripCount trip, const std::function<void()>& body);
  KernelBuilder& BeginFor(LoopHead head, TripCount trip);
  KernelBuilder& For(std::string var, Expr begin, Expr end, Expr step, TripCount trip,
                     const std::function<void()>& body);
  KernelBuilder& BeginFor(std::string var, Expr begin, Expr end, Expr step, TripCount trip);
  KernelBuilder& EndFor();

  // A device function described with constructs, called from several places: each Call
  // emits the body there, inside a region named after the function (builder paths say
  // "call NAME"), so Build() checks its barriers where it is called, the plan counts its
  // records per call and the timeline shows its regions, loops and waits at each call.
  // What a `__device__` helper in a Preamble hides (its __syncthreads, its spans), this
  // shows:
  //   const KernelBuilder::DeviceFunction block_sum{
  //       "block_sum", {"float v"}, "float", [](KernelBuilder& b) {
  //         b.Stmt("red[threadIdx.x] = v;");
  //         b.Barrier("stored");
  //         b.For({"s", 128, "s > 0", "s >>= 1"}, TripCount::Exact(8), [&] {
  //           b.Stmt("if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];");
  //           b.Barrier("halved");
  //         });
  //         b.Stmt("result = red[0];");
  //         b.Barrier("read");
  //       }};
  //   b.Call(block_sum, {"acc"}, "total");  // float total = block_sum(acc)
  // Each parameter ("type name") is a local of the call holding its argument (every
  // argument is evaluated before any parameter is declared); with a result type the body
  // assigns `result`, and Call declares `result_var` of that type (value-initialized)
  // before the call. Build() rejects a call whose argument count differs from the
  // parameters', a result without a variable (or a variable without a result type), and
  // calls nested more than 8 deep (a function that calls itself).
  struct DeviceFunction {
    std::string name;
    std::vector<std::string> params;
    std::string result_type;
    std::function<void(KernelBuilder&)> body;
  };
  KernelBuilder& Call(const DeviceFunction& fn, std::vector<std::string> args,
                      std::string result_var = "");

  // `if (condition) then_body else else_body`. The plan takes the larger side.
  // A Barrier() (or a raw `__syncthreads()`) may sit under an if only when every thread of
  // the block takes the same side: say so with Uniform::kBlock (its condition has one value
  // in the whole block: it reads blockIdx, gridDim, blockDim, kernel arguments, memory every
  // thread reads alike such as `seq_lens[blockIdx.y]`, or values all threads computed
  // alike).
  // Under the default Uniform::kThread, Build() rejects the barrier, naming its path: the
  // threads that take the other side would never arrive (a deadlock, or undefined on a GPU).
  //   b.If("k + 1 < num_k", [&] { b.Barrier(); }, Uniform::kBlock);
  // The warpgroup-wide instructions (MmaGroup, WaitMmaGroups, SetMaxRegisters) have the same
  // rule one level down: under an if they need Uniform::kWarpgroup (every thread of a
  // warpgroup takes the same side) or Uniform::kBlock.
  KernelBuilder& If(std::string condition, const std::function<void()>& then_body,
                    Uniform uniform = Uniform::kThread);
  KernelBuilder& If(std::string condition, const std::function<void()>& then_body,
                    const std::function<void()>& else_body,
                    Uniform uniform = Uniform::kThread);
  KernelBuilder& BeginIf(std::string condition, Uniform uniform = Uniform::kThread);
  KernelBuilder& Else();
  KernelBuilder& EndIf();

  // Splits the block's warps or warpgroups into roles, in order: with {producer 1,
  // consumer 2} by warpgroup, warpgroup 0 runs producer and warpgroups 1-2 consumer. The
  // roles must cover the block exactly. Role splits do not nest, and a role body may not
  // contain a Barrier() (__syncthreads: only part of the block would arrive); roles hand off
  // with named barriers, phase barriers and async copies (below).
  KernelBuilder& Roles(RoleAxis axis, std::vector<Role> roles);
  KernelBuilder& BeginRoles(RoleAxis axis);
  KernelBuilder& BeginRole(std::string name, uint32_t count, std::string index_var = "");
  KernelBuilder& EndRole();
  KernelBuilder& EndRoles();

  // `__syncthreads()`. With a barrier-wait site (per `record`), the wait from arrival to
  // release is recorded under `name`.
  KernelBuilder& Barrier(std::string name = "barrier",
                         BarrierRecord record = BarrierRecord::kByPolicy);

  // ---- Warp specialization: named barriers, phase barriers, asynchronous copies. All may
  // be used inside roles (unlike Barrier()). The emitted code calls the device primitives
  // of jit/primitives/warptrace_primitives.cuh (inline PTX on the GPU, the host runtime on the
  // CPU backend). Record points are added by RecordPolicy::handoffs (format/links.h gives
  // each event's payload): an instant per arrival, a span per phase wait, an async span per
  // copy from its issue to the completion its issuing thread observes.

  // Named barrier `id` (1..15; 0 is __syncthreads') for `threads` threads (a positive
  // multiple of 32, at most the block): bar.sync, or with NamedBarrierArrive bar.arrive
  // (arrive without waiting). A sync gets a barrier-wait site like Barrier().
  KernelBuilder& NamedBarrierSync(std::string name, uint32_t id, uint32_t threads,
                                  BarrierRecord record = BarrierRecord::kByPolicy);
  KernelBuilder& NamedBarrierArrive(std::string name, uint32_t id, uint32_t threads);

  // Declares `__shared__ unsigned long long name[size]`, an array of phase barriers
  // (mbarriers), each completing a phase after `arrivals` arrivals; thread 0 initializes
  // them at the kernel's start (then a fence and __syncthreads). Element i has barrier id
  // first + i, where first is the number of elements declared before it.
  KernelBuilder& PhaseBarriers(std::string name, uint32_t size, uint32_t arrivals);
  // Arrives on barriers[index]. `phase` is the 0-based number of the barrier's phase the
  // arrival counts towards (e.g. "k / stages" for the k-th use of a ring stage): recorded
  // in the payload, the hardware counts by itself.
  KernelBuilder& Arrive(std::string barriers, Expr index, Expr phase,
                        ArriveBy by = ArriveBy::kEveryThread);
  // Arrives and adds `bytes` of expected transactions (sm_90: the bytes a bulk copy
  // completes on this element).
  KernelBuilder& ArriveExpectTx(std::string barriers, Expr index, Expr phase, Expr bytes,
                                ArriveBy by = ArriveBy::kOneThread);
  // Waits until phase `phase` of barriers[index] has completed (parity phase & 1). Every
  // thread that reaches it waits. Waiting on a phase older than the previous one is
  // undefined (the parity repeats).
  KernelBuilder& WaitPhase(std::string barriers, Expr index, Expr phase);

  // An asynchronous global->shared copy (jit/builder/kernel.h, AsyncCopySpec): cp.async by the
  // role's threads, or with spec.barrier a bulk copy completing on a phase barrier.
  // Completion, as recorded: a cp.async copy completes at the next WaitAsyncCopies() of
  // the thread; a bulk copy when its issuing thread sees it complete (jit/builder/kernel.h,
  // AsyncCopySpec: polled during the role's phase waits, at latest at reuse or exit).
  KernelBuilder& AsyncCopy(AsyncCopySpec spec);
  // cp.async.wait_group `pending` (0..7): every cp.async copy the thread issued but its
  // `pending` most recent ones (each copy is one group) is complete and visible to it (make
  // it visible to others with an Arrive, which releases). A multi-stage cp.async pipeline
  // keeps the copies of the next stages in flight with pending > 0.
  KernelBuilder& WaitAsyncCopies(uint32_t pending = 0);

  // ---- Tensor cores and registers (sm_90a; the kernel is then compiled for sm_90a) ----
  // A wgmma group: wgmma.fence, the body (raw statements calling
  // warptrace_wgmma_mma_async_bf16_ss/_rs, jit/primitives/wgmma_sm90.cuh), then
  // wgmma.commit_group. Every thread of the warpgroup runs it (wgmma is warpgroup-wide).
  // Recorded (SiteKind::kMmaGroup) as an async span from its commit to the WaitMmaGroups
  // that retires it: the builder knows which groups a wait_group N retires (all but the
  // thread's N most recent), so the timeline shows the tensor cores working while the
  // warpgroup does something else (a softmax, the next group's issue).
  //   b.MmaGroup("qk", [&] { b.Stmt("warptrace_wgmma_mma_async_bf16_ss<128>(s, da, db, 0);"); });
  //   b.Region("softmax", ...);            // overlaps the qk span
  //   b.WaitMmaGroups(0);                  // qk's span ends here
  KernelBuilder& MmaGroup(std::string name, const std::function<void()>& body);
  KernelBuilder& BeginMmaGroup(std::string name);
  KernelBuilder& EndMmaGroup(std::string name = "");
  // wgmma.wait_group `pending` (0..7): every wgmma group the thread committed but its
  // `pending` most recent ones is complete, its accumulators readable.
  KernelBuilder& WaitMmaGroups(uint32_t pending = 0);
  // setmaxnreg.inc / .dec.sync.aligned.u32 `registers` (24..256, a multiple of 8) for the
  // warpgroup running it (inside a role by warpgroup: a producer decreases, consumers
  // increase). The kernel gets __launch_bounds__(threads per block, 1), which fixes the
  // register count at entry: without it ptxas ignores setmaxnreg (warning C7508, which the
  // compile turns into an error naming the kernel).
  KernelBuilder& SetMaxRegisters(uint32_t registers, RegisterChange change);
  // A TMA store (sm_90, cp.async.bulk.tensor.2d.global.shared::cta.bulk_group) of the box
  // at spec.src (shared memory, 128-byte aligned) to the tensor map spec.tensor_map at
  // spec.coords (2, innermost first), issued by the first thread of the role, then
  // cp.async.bulk.commit_group. The threads that wrote the box must have made their
  // writes visible to the async proxy first (warptrace_fence_proxy_async(), then a barrier
  // of the role). Recorded as an async span (SiteKind::kAsyncCopy, no barrier) from the
  // issue to the WaitTmaStores that retires it. Only spec.name, tensor_map, src and coords
  // are used.
  KernelBuilder& TmaStore(AsyncCopySpec spec);
  // cp.async.bulk.wait_group.read `pending` (0..7) by the role's first thread: the shared
  // memory of every TMA store it issued but its `pending` most recent ones may be reused.
  KernelBuilder& WaitTmaStores(uint32_t pending = 0);

  // ---- Thread-block clusters (sm_90; the kernel needs Cluster()) ----
  // The cluster barrier, every thread of every CTA of the cluster (PTX ISA barrier.cluster:
  // a wait waits for every non-exited thread of the cluster to have arrived). ClusterSync is
  // barrier.cluster.arrive.release + barrier.cluster.wait.acquire; it gets a barrier-wait
  // record site (per `record`, like Barrier()) from the arrival to the release, so the
  // timeline shows how long a CTA waited for its peers. The split form overlaps work with
  // the barrier: ClusterArrive (.release, or .relaxed without memory ordering; no record,
  // like NamedBarrierArrive), independent work, then ClusterWait (.acquire; recorded like a
  // sync). Every thread arrives once before each wait. End a kernel whose CTAs read each
  // other's shared memory with a ClusterSync, so that no CTA exits while a peer may still
  // reach its shared memory (the host backend fails the launch otherwise, naming the CTAs).
  //   b.Cluster({2, 1, 1});
  //   b.Region("partials", ...);
  //   b.ClusterSync("partials ready");
  //   b.Region("reduce", [&] { b.Stmt("s += warptrace_cluster_map(part, peer)[i];"); });
  //   b.ClusterSync("done reading");
  KernelBuilder& ClusterSync(std::string name = "cluster barrier",
                             BarrierRecord record = BarrierRecord::kByPolicy);
  KernelBuilder& ClusterArrive(std::string name = "cluster barrier", bool relaxed = false);
  KernelBuilder& ClusterWait(std::string name = "cluster barrier",
                             BarrierRecord record = BarrierRecord::kByPolicy);
  // An arrival on element `index` of the phase barrier array `barriers` of the cluster's CTA
  // `cta` (a rank expression): mbarrier.arrive.release.cluster.shared::cluster on the peer's
  // element at the same offset (the way CUTLASS's consumers release a multicast stage in
  // every CTA that shares it). Recorded like Arrive, with the peer's barrier in the payload,
  // so with a cluster link scope the timeline draws the arrow from this arrival to the wait
  // it released in the peer CTA. The peer's init must be visible to the cluster first (a
  // ClusterSync after the kernel start). Counted like Arrive by the array's phases in the
  // peer; the layout does not check such an array's arrival counts.
  KernelBuilder& ArriveRemote(std::string barriers, Expr index, Expr phase, Expr cta,
                              ArriveBy by = ArriveBy::kOneThread);

  // An early return of the thread. When profiled, the exits of every enclosing record site
  // and the profiler epilogue run first. It must be the last thing in its body. No Barrier
  // may run after a ReturnScope::kThread return (the threads that returned would never
  // arrive: a deadlock); when every thread of the block takes the return together, say so
  // with ReturnScope::kBlock.
  KernelBuilder& Return(ReturnScope scope = ReturnScope::kThread);

  // Validates and returns the kernel, or the first misuse. InvalidArgument, with the
  // builder path, for: an invalid or reserved identifier (kernel, parameter, shared array,
  // loop variable, role index variable), a name declared twice, an unknown parameter or
  // shared element type, a grid or block dimension of 0 or a block over 1024 threads, an
  // empty kernel, a construct left open or closed out of order, a region name reused with
  // another meaning (as another kind of site, or nested in itself), a loop whose exact trip
  // count contradicts its literal bounds, roles that do not cover the block or whose block
  // size is not a whole number of warps/warpgroups, a nested role split, a barrier inside a
  // role, a Barrier() or a raw statement's `__syncthreads()` under an If whose condition is
  // not declared Uniform::kBlock, a raw statement calling `__syncthreads()` under an
  // if/else or switch of its own, statements after a Return, a barrier that may run after a thread-scope Return (in
  // program order, or in a later iteration of a loop around both), a block-scope Return
  // inside a role, a raw statement that returns from the kernel, jumps out of itself
  // (break, continue, goto), has unbalanced brackets or an unterminated comment or literal,
  // or declares extern shared memory, shared memory over the device limits; and for warp
  // specialization: a named barrier id outside 1..15 or a thread count that is not a
  // multiple of 32 up to the block, or fewer than the threads of the role that all reach
  // it; a phase barrier array of 0 elements or 0 arrivals (or over 2^20 - 1), declared
  // twice or inside the body, or used without being declared; a literal index outside the
  // array; an arrival, a wait or a bulk copy without its phase; a wait on an array no construct
  // arrives on; an arrival that brings more threads than the phase's count (or a count that
  // is not a multiple of them), an ArriveExpectTx without its bytes; a copy without its
  // pointers or stride, of 0 rows or with a row size that is not a multiple of 16; a copy
  // whose completion is never awaited (a cp.async copy with no WaitAsyncCopies after it, a
  // bulk copy on an array nobody waits on), WaitAsyncCopies over 7; an every-thread arrival
  // or a named barrier that may run after a thread-scope Return of threads that take part
  // in it (its phase or barrier would never complete).
  // Every error carries a mark IsBuildError() recognizes.
  absl::StatusOr<Kernel> Build() const;

 private:
  absl::StatusOr<Kernel> BuildUnmarked() const;
  KernelBuilder& ClusterBarrier(std::string name, ClusterBarrierOp op, BarrierRecord record);
  // An open construct; moved into its parent's body when closed.
  struct Frame {
    KernelNode node;
    std::string label;  // "region mma", as it appears in paths
    bool in_else = false;
  };
  void Fail(const std::string& message);
  // Preamble's checks and append, for code at builder path `path` ("kernel k > preamble 2",
  // "kernel k > constant kTile").
  KernelBuilder& AddPreamble(std::string code, std::string path);
  // A statement's raw `__shared__` arrays, counted in the shared budget (SharedArrayDecl::
  // in_statement); a Fail with the SharedArray spelling for one it cannot size.
  void CountRawShared(const std::string& code, const std::string& path);
  std::string Path() const;
  // The body new nodes go to, or null (with an error) where none may go.
  std::vector<KernelNode>* CurrentBody(const char* what);
  // Adds a leaf to the current body, or opens a construct; the path gets LabelOf(node).
  void Append(KernelNode node);
  void Open(KernelNode node);
  // Closes the innermost frame, which must be of `kind`; null (with an error) otherwise.
  bool Close(KernelNode::Kind kind, const char* what, const std::string& name = "");

  Kernel kernel_;
  std::string error_;
  std::vector<Frame> open_;
  int call_depth_ = 0;  // Calls being expanded
};

// Whether `status` is a KernelBuilder::Build() rejection (an InvalidArgument with the
// builder's payload), as opposed to another InvalidArgument, e.g. a bad shape a kernel
// library rejected before building. The mark survives being returned as is.
bool IsBuildError(const absl::Status& status);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_KERNEL_BUILDER_H_
