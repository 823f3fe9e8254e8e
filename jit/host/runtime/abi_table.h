// The host runtime's side of the ABI (host_abi.h, WarptraceHostRuntime): what kernel code
// calls on its fibers for barriers, warp collectives, shared memory, mbarriers, spin-wait
// hooks, cp.async, clock corrections and failed asserts. Each entry runs on the calling
// fiber's stack, on its block's worker thread (worker.h), and may switch to another fiber
// or unwind the caller (FiberAborted) when the launch failed.
#ifndef WARPTRACE_JIT_HOST_ABI_TABLE_H_
#define WARPTRACE_JIT_HOST_ABI_TABLE_H_

#include "jit/host/device/host_abi.h"

namespace warptrace::host {

// The table every block's threads point at (WarptraceHostThread::rt). Static storage.
const WarptraceHostRuntime& AbiTable();

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_ABI_TABLE_H_
