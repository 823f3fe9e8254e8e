// The whole-tree checks of ValidateKernel (jit/builder/kernel_validation.h): rules that
// relate two constructs anywhere in the kernel (a wait and the arrivals that could complete
// it, a copy or group and the wait that observes it, an arrival or barrier and an earlier
// thread-scope Return). Internal to jit/builder.
#ifndef WARPTRACE_JIT_BUILDER_KERNEL_TREE_CHECKS_H_
#define WARPTRACE_JIT_BUILDER_KERNEL_TREE_CHECKS_H_

#include <vector>

#include "absl/status/status.h"
#include "jit/builder/kernel.h"

namespace warptrace {

// OK, or InvalidArgument naming the builder path at fault: a wait on an array nothing
// arrives on, a copy, wgmma group or TMA store nothing waits for, an every-thread arrival or
// named barrier some of whose threads may have returned, a Barrier after a thread-scope
// Return.
absl::Status CheckKernelTree(const std::vector<KernelNode>& body);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_KERNEL_TREE_CHECKS_H_
