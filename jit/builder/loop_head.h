// Running a loop head on the host, to check a declared trip count against it: how many times
// `for (int var = init; condition; update)` runs, for the heads simple enough to run without
// the kernel (KernelBuilder::LoopHead: halving, shifting, counting down by literals).
#ifndef WARPTRACE_JIT_BUILDER_LOOP_HEAD_H_
#define WARPTRACE_JIT_BUILDER_LOOP_HEAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "jit/builder/kernel.h"

namespace warptrace {

// The iterations of `for (int var = init; condition; update)`, run with C++ int semantics:
// nullopt when the head is not one this can run (init not an integer literal; a condition
// other than `var OP literal` or `literal OP var` with OP one of < <= > >= != ==; an update
// other than ++var, var++, --var, var--, or `var OP= literal` with OP one of + - * / << >>).
// InvalidArgument, saying why, when the variable would leave int's range, a shift or
// division is undefined (by 0, by a negative count or by 32 and more), or the loop runs
// more than `limit` times (it may never end).
std::optional<absl::StatusOr<uint64_t>> RunLoopHead(const std::string& var,
                                                    const std::string& init,
                                                    const std::string& condition,
                                                    const std::string& update, uint64_t limit);

// Build()'s check of a loop with a head of its own (KernelNode::condition): InvalidArgument
// naming the loop's path when the head lacks a condition or an update, or runs (RunLoopHead)
// a different number of times than its Exact count or more than its UpperBound; OK for a
// head it cannot run (taken as declared) and for other trip counts.
absl::Status CheckLoopHeadTrips(const KernelNode& loop);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_LOOP_HEAD_H_
