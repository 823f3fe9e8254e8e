// ValidateKernel: the checks KernelBuilder::Build() runs on a finished kernel tree, where a
// misuse needs context (names in scope, enclosing regions and roles, what may run after an
// early return) that the builder's calls do not have one at a time.
//
//   RETURN_IF_ERROR(ValidateKernel(kernel));  // InvalidArgument naming the builder path
//
// Every rule is listed with KernelBuilder::Build (jit/builder/kernel_builder.h); raw statements are
// read with jit/builder/cpp_snippet.h. The kernel's nodes must carry their builder paths.
#ifndef WARPTRACE_JIT_KERNEL_VALIDATION_H_
#define WARPTRACE_JIT_KERNEL_VALIDATION_H_

#include "absl/status/status.h"
#include "jit/builder/kernel.h"

namespace warptrace {

// OK, or InvalidArgument for the first misuse found, its message starting with the builder
// path of the construct at fault ("kernel gemm > loop k > barrier sync: ..."): the
// declarations first, then the rules each node can check in its context, in preorder, then
// the whole-tree ones (waits and copies nothing completes, arrivals after a return).
absl::Status ValidateKernel(const Kernel& kernel);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNEL_VALIDATION_H_
