/* The ABI between HostDevice (jit/host_device.cc) and a kernel compiled for the host backend
 * (which includes cuda_on_cpu.h). Freestanding C: compiled into both sides. Bump
 * WARPTRACE_HOST_ABI_VERSION whenever anything here changes.
 *
 * Before calling the kernel's host entry on an OS thread, HostDevice describes that thread
 * to the shared object with warptrace_host_bind_thread(). The kernel's barriers and warp
 * exchanges call back into HostDevice through the function pointers, which may not return
 * (they unwind the kernel's thread with a C++ exception when the block is aborted, e.g. on
 * a deadlock), so the shared object must be compiled with exceptions enabled (the default).
 *
 * Exported by every host-backend shared object (defined in cuda_on_cpu.h):
 *   unsigned int warptrace_host_abi_version(void);   returns WARPTRACE_HOST_ABI_VERSION
 *   void warptrace_host_bind_thread(const struct WarptraceHostThread* thread);
 */
#ifndef WARPTRACE_JIT_HOST_HOST_ABI_H_
#define WARPTRACE_JIT_HOST_HOST_ABI_H_

#define WARPTRACE_HOST_ABI_VERSION 1u

/* The host backend's nominal "SM clock": %clock reads return steady-clock nanoseconds times
 * this rate, so cycles and globaltimer nanoseconds calibrate to exactly this clock. */
#define WARPTRACE_HOST_SM_CLOCK_KHZ 1500000ull

#ifdef __cplusplus
extern "C" {
#endif

struct WarptraceHostDim {
  unsigned int x, y, z;
};

struct WarptraceHostThread {
  unsigned int abi_version; /* WARPTRACE_HOST_ABI_VERSION */
  struct WarptraceHostDim thread_idx, block_idx, block_dim, grid_dim;
  unsigned int sm_id; /* virtual SM of the block: block_linear % num_virtual_sms */
  unsigned int warp;  /* linear thread id / 32 */
  unsigned int lane;  /* linear thread id % 32 */
  void* dynamic_shared; /* the block's dynamic shared memory (16-byte aligned) or null */
  void* block;          /* opaque: HostDevice's block runtime */
  /* __syncthreads(): waits for every thread of the block. */
  void (*sync_block)(void* block);
  /* __syncwarp(): waits for every thread of warp `warp`. */
  void (*sync_warp)(void* block, unsigned int warp);
  /* A warp-wide exchange: every lane of `warp` calls it with its value; each gets the value
   * of `src_lane`, or its own when src_lane is not a lane of the warp. */
  unsigned long long (*shuffle)(void* block, unsigned int warp, unsigned int lane,
                                unsigned long long value, unsigned int src_lane);
};

typedef unsigned int (*WarptraceHostAbiVersionFn)(void);
typedef void (*WarptraceHostBindThreadFn)(const struct WarptraceHostThread*);
/* The kernel's host entry (KernelSource::host_entry): runs the kernel for the bound thread. */
typedef void (*WarptraceHostEntryFn)(void** args);

#ifdef __cplusplus
}
#endif

#endif /* WARPTRACE_JIT_HOST_HOST_ABI_H_ */
