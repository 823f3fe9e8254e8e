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
// jit/kernel_source.h with balanced brackets, must not `return` from the kernel (use
// Return(), which runs the profiler epilogue; a `return` inside a lambda is fine), must
// not declare `extern __shared__` memory (use DynamicShared()) and must not jump
// (break/continue/goto) out of themselves: the jump would skip the exit events of the
// builder constructs around it. Build() checks all of this on the statement's tokens
// (jit/cpp_snippet.h), so comments and string literals do not count. Shared arrays
// declared with SharedArray() count against the shared-memory budget the plan uses for
// auto placement; `__shared__` arrays written in raw statements are invisible to it.
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
#include "jit/kernel.h"
#include "jit/kernel_source.h"
#include "profiler/trace/layout.h"

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
  // and the profiler epilogue run first. It must be the last thing in its body. No Barrier
  // may run after a ReturnScope::kThread return (the threads that returned would never
  // arrive: a deadlock); when every thread of the block takes the return together, say so
  // with ReturnScope::kBlock.
  KernelBuilder& Return(ReturnScope scope = ReturnScope::kThread);

  // Validates and returns the kernel, or the first misuse. InvalidArgument, with the
  // builder path, for: an invalid or reserved identifier (kernel, parameter, shared
  // array, loop variable, role index variable), a name declared twice, an unknown
  // parameter or shared element type, a grid or block dimension of 0 or a block over 1024
  // threads, an empty kernel, a construct left open or closed out of order, a region name
  // reused with another meaning (as another kind of site, or nested in itself), a loop
  // whose exact trip count contradicts its literal bounds, roles that do not cover the
  // block or whose block size is not a whole number of warps/warpgroups, a nested role
  // split, a barrier inside a role, statements after a Return, a barrier that may run
  // after a thread-scope Return (in program order, or in a later iteration of a loop
  // around both), a block-scope Return inside a role, a raw statement that returns from
  // the kernel, jumps out of itself (break, continue, goto), has unbalanced brackets or an
  // unterminated comment or literal, or declares extern shared memory, shared memory over
  // the device limits.
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
