// The kernel examples/record_cost_gpu.cc measures: one warp runs a dependent xorshift chain
// `iterations` times and times its own loop with clock64(). Profiled, each iteration's body
// is the region "tick" (2 events per iteration); unprofiled, the loop is the same code
// without records, so the difference of the two clock deltas is the recording cost.
//
// Kernel parameters, in order: unsigned long long* cycles (cycles[0] = the clock delta of
// thread 0, the warp's recorder), unsigned int* sink (32 values, keeps the chain live),
// int iterations (must equal the `iterations` the kernel was built with: the plan counts
// it). Grid 1, block 32.
#ifndef WARPTRACE_EXAMPLES_RECORD_COST_LOOP_H_
#define WARPTRACE_EXAMPLES_RECORD_COST_LOOP_H_

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace::examples {

// InvalidArgument for iterations < 1.
absl::StatusOr<Kernel> RecordCostLoop(int iterations);

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_RECORD_COST_LOOP_H_
