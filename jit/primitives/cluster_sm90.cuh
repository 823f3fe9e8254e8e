// Thread-block clusters (sm_90+): the cluster's special registers, the cluster barrier,
// distributed shared memory (a peer CTA's shared memory through mapa) and arrivals on a peer
// CTA's mbarrier. One source for the GPU (inline PTX) and the host backend (the runtime,
// jit/host/runtime/cluster.h, runs a cluster's CTAs together on one virtual SM); included by
// warptrace_primitives.cuh. A kernel using them is launched with a cluster shape
// (KernelBuilder::Cluster; cuLaunchKernelEx's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION on a GPU).
//
//   __shared__ float partial[256];
//   ... fill partial ...
//   warptrace_cluster_sync();                                   // peers' partials are written
//   const float* peer = warptrace_cluster_map(partial, warptrace_cluster_ctarank() ^ 1);
//   float sum = partial[threadIdx.x] + peer[threadIdx.x];        // reads the peer's memory
//   warptrace_cluster_sync();   // no CTA exits while a peer may still read its shared memory
//
// Special registers (PTX ISA "Special Registers": %cluster_ctarank, %cluster_nctarank,
// %clusterid, %cluster_nctaid, %cluster_ctaid):
//   warptrace_cluster_ctarank()        this CTA's rank in its cluster, 0 .. nctarank - 1
//   warptrace_cluster_nctarank()       CTAs per cluster
//   warptrace_cluster_id_{x,y,z}()     the cluster's position in the grid of clusters
//   warptrace_cluster_dim_{x,y,z}()    the cluster's shape in CTAs
// The cluster barrier (PTX ISA: "barrier.cluster.arrive{.sem}{.aligned}; .sem = {.release,
// .relaxed}" and "barrier.cluster.wait{.acquire}{.aligned}"; a wait waits for every
// non-exited thread of the cluster to have arrived; every thread arrives once before it
// waits):
//   warptrace_cluster_arrive()          barrier.cluster.arrive.release
//   warptrace_cluster_arrive_relaxed()  barrier.cluster.arrive.relaxed (no memory ordering)
//   warptrace_cluster_wait()            barrier.cluster.wait.acquire
//   warptrace_cluster_sync()            arrive (release) then wait (acquire)
// Distributed shared memory (PTX ISA mapa: "Get address in the CTA specified by operand b
// which corresponds to the address specified by operand a"):
//   warptrace_cluster_map(p, rank)            mapa.u64: the generic address of `p` (this
//                                             CTA's shared memory) in CTA `rank`'s
//   warptrace_cluster_map_shared(p, rank)     mapa.shared::cluster.u32: its shared::cluster
//                                             address, for the accessors below
//   warptrace_ld_shared_cluster_u32/f32(a)    ld.shared::cluster
//   warptrace_st_shared_cluster_u32/f32(a, v) st.shared::cluster
//   warptrace_red_shared_cluster_add_u32(a, v)  red.shared::cluster.add.u32
//   warptrace_mbarrier_arrive_cluster(bar, rank)  mbarrier.arrive.release.cluster
//                                             .shared::cluster.b64 on CTA `rank`'s mbarrier
//                                             at the offset of `bar` (the way CUTLASS's
//                                             consumers release a stage in every CTA)
//   warptrace_fence_acq_rel_cluster()         fence.acq_rel.cluster
// TMA multicast (sm_90a; PTX ISA cp.async.bulk.tensor ".multicast::cluster": the box is
// copied into the same shared-memory offset of every CTA whose bit is set in the 16-bit
// ctaMask, and each destination CTA's mbarrier at the offset of `bar` gets the box's bytes
// as complete_tx):
//   warptrace_tma_load_2d_multicast(smem_dst, map, c0, c1, bar, mask)
//   warptrace_tma_load_3d_multicast(smem_dst, map, c0, c1, c2, bar, mask)
// Each destination's barrier must expect every box it receives (all CTAs of the mask that
// multicast to it).
// (fence.mbarrier_init.release.cluster is warptrace_fence_mbarrier_init.)
//
// On the host a shared::cluster address is (rank + 1) << 20 | the window address of the
// shared-memory window (jit/host/device/wgmma_host.h; below 2^18), and a window address
// (rank bits 0) is the calling CTA's own, as shared::cta addresses are valid shared::cluster
// addresses of the own CTA on a GPU. A rank outside the cluster, an address outside the
// CTA's shared memory, a peer that has exited, and a CTA exiting while a peer that mapped
// its memory has not passed a cluster barrier since fail the launch naming block, thread
// and the CTA ranks.
#ifndef WARPTRACE_CLUSTER_SM90_CUH_
#define WARPTRACE_CLUSTER_SM90_CUH_

#if defined(WARPTRACE_HOST_BACKEND)

namespace warptrace_host {

inline unsigned int ClusterCount(const WarptraceHostDim& d) { return d.x * d.y * d.z; }

inline void* ClusterMap(const void* p, unsigned int rank, const char* what, int track = 1) {
  return Rt().mapa(Fiber(), p, rank, track, what);
}

// The generic address of a shared::cluster address (see above).
inline void* ClusterAddress(unsigned int a, const char* what) {
  const ::warptrace_host::wgmma::Window w = ::warptrace_host::wgmma::CurrentWindow();
  const unsigned int rank_bits = a >> 20;
  const char* local = ::warptrace_host::wgmma::WindowPointer(w, a & 0xfffffu, 1);
  if (local == nullptr) {
    ::warptrace_host::wgmma::Fail("%s: shared::cluster address 0x%x is not in the shared "
                                  "memory of a CTA of the cluster", what, a);
  }
  if (rank_bits == 0) return const_cast<char*>(local);
  return ClusterMap(local, rank_bits - 1, what);
}

}  // namespace warptrace_host

inline unsigned int warptrace_cluster_ctarank() {
  return ::warptrace_host::Current().cluster_rank;
}
inline unsigned int warptrace_cluster_nctarank() {
  return ::warptrace_host::ClusterCount(::warptrace_host::Current().cluster_dim);
}
inline unsigned int warptrace_cluster_id_x() { return ::warptrace_host::Current().cluster_idx.x; }
inline unsigned int warptrace_cluster_id_y() { return ::warptrace_host::Current().cluster_idx.y; }
inline unsigned int warptrace_cluster_id_z() { return ::warptrace_host::Current().cluster_idx.z; }
inline unsigned int warptrace_cluster_dim_x() { return ::warptrace_host::Current().cluster_dim.x; }
inline unsigned int warptrace_cluster_dim_y() { return ::warptrace_host::Current().cluster_dim.y; }
inline unsigned int warptrace_cluster_dim_z() { return ::warptrace_host::Current().cluster_dim.z; }

#define warptrace_cluster_arrive()                                  \
  ::warptrace_host::Rt().cluster_barrier(::warptrace_host::Fiber(), 1, 0, \
                                         WARPTRACE_HOST_AT("barrier.cluster.arrive.release"))
#define warptrace_cluster_arrive_relaxed()                          \
  ::warptrace_host::Rt().cluster_barrier(::warptrace_host::Fiber(), 1, 0, \
                                         WARPTRACE_HOST_AT("barrier.cluster.arrive.relaxed"))
#define warptrace_cluster_wait()                                    \
  ::warptrace_host::Rt().cluster_barrier(::warptrace_host::Fiber(), 0, 1, \
                                         WARPTRACE_HOST_AT("barrier.cluster.wait.acquire"))
#define warptrace_cluster_sync()                                    \
  ::warptrace_host::Rt().cluster_barrier(::warptrace_host::Fiber(), 1, 1, \
                                         WARPTRACE_HOST_AT("barrier.cluster.arrive+wait"))

template <typename T>
inline T* warptrace_cluster_map(T* p, unsigned int rank) {
  return static_cast<T*>(::warptrace_host::ClusterMap(p, rank, "mapa.u64"));
}
inline unsigned int warptrace_cluster_map_shared(const void* p, unsigned int rank) {
  const char* what = "mapa.shared::cluster.u32";
  ::warptrace_host::ClusterMap(p, rank, what);  // checks the rank and the address
  return ((rank + 1) << 20) | static_cast<unsigned int>(__cvta_generic_to_shared(p));
}
inline unsigned int warptrace_ld_shared_cluster_u32(unsigned int a) {
  return *static_cast<unsigned int*>(
      ::warptrace_host::ClusterAddress(a, "ld.shared::cluster.u32"));
}
inline float warptrace_ld_shared_cluster_f32(unsigned int a) {
  return *static_cast<float*>(::warptrace_host::ClusterAddress(a, "ld.shared::cluster.f32"));
}
inline void warptrace_st_shared_cluster_u32(unsigned int a, unsigned int v) {
  *static_cast<unsigned int*>(::warptrace_host::ClusterAddress(a, "st.shared::cluster.u32")) = v;
}
inline void warptrace_st_shared_cluster_f32(unsigned int a, float v) {
  *static_cast<float*>(::warptrace_host::ClusterAddress(a, "st.shared::cluster.f32")) = v;
}
inline void warptrace_red_shared_cluster_add_u32(unsigned int a, unsigned int v) {
  // The CTAs of a cluster run on one worker thread: a plain add is atomic among them.
  *static_cast<unsigned int*>(
      ::warptrace_host::ClusterAddress(a, "red.shared::cluster.add.u32")) += v;
}
inline void warptrace_mbarrier_arrive_cluster(unsigned long long* bar, unsigned int rank) {
  unsigned long long* peer = static_cast<unsigned long long*>(::warptrace_host::ClusterMap(
      bar, rank, "mbarrier.arrive.release.cluster.shared::cluster.b64"));
  ::warptrace_host::MutableCurrent().cluster_op = 1;
  ::warptrace_host::MbarUpdate(peer, 1, 0);
  ::warptrace_host::MutableCurrent().cluster_op = 0;
}
inline void warptrace_fence_acq_rel_cluster() {}

namespace warptrace_host {
// Notes a multicast delivery on CTA rank `r`'s barrier `peer_bar` (the caller's own `bar`
// at the same offset) for MbarCheckMulticastTx, before its bytes complete on it.
inline void NoteMulticastLanding(unsigned long long* peer_bar, unsigned long long* bar,
                                 unsigned int r, unsigned short mask, const CUtensorMap* map,
                                 const char* site) {
  MulticastLanding& m = MulticastLandings()[peer_bar];
  const unsigned long long phase = CompletedPhases()[peer_bar];
  const long long launch = Current().clock->ns_base;
  if (m.launch != launch || m.phase != phase) m = MulticastLanding{launch, phase};
  m.sources |= 1u << Current().cluster_rank;
  m.dest_rank = r;
  m.offset = static_cast<unsigned int>(__cvta_generic_to_shared(bar));
  m.mask = mask;
  m.bytes = static_cast<unsigned int>(::warptrace_host_tma::BoxBytes(
      *reinterpret_cast<const WarptraceHostTensorMap*>(map)));
  m.site = site;
}
inline void TmaMulticast(void* smem, const CUtensorMap* map, const int32_t* c, uint32_t dims,
                         unsigned long long* bar, unsigned short mask, const char* what,
                         const char* site) {
  const unsigned int n = ClusterCount(Current().cluster_dim);
  if (mask == 0 || (n < 16 && (mask >> n) != 0)) {
    ::warptrace_host::wgmma::Fail(
        "%s: ctaMask 0x%04x names %s of CTA rank %u's cluster of %u CTAs (ranks 0-%u)", what,
        mask, mask == 0 ? "no CTA" : "CTAs outside", Current().cluster_rank, n, n - 1);
  }
  for (unsigned int r = 0; r < n; ++r) {
    if (((mask >> r) & 1u) == 0) continue;
    void* dst = ClusterMap(smem, r, what, /*track=*/0);
    auto* peer_bar = static_cast<unsigned long long*>(ClusterMap(bar, r, what, 0));
    NoteMulticastLanding(peer_bar, bar, r, mask, map, site);
    MutableCurrent().cluster_op = 1;
    TmaCopy(dst, map, c, dims, peer_bar, what, site);
    MutableCurrent().cluster_op = 0;
  }
}
}  // namespace warptrace_host

inline void warptrace_tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, int c0,
                                            int c1, unsigned long long* bar,
                                            unsigned short mask,
                                            const char* site = __builtin_FILE()) {
  const int32_t c[2] = {c0, c1};
  ::warptrace_host::TmaMulticast(smem_dst, map, c, 2, bar, mask,
                                 "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                                 "complete_tx::bytes.multicast::cluster",
                                 site);
}
inline void warptrace_tma_load_3d_multicast(void* smem_dst, const CUtensorMap* map, int c0,
                                            int c1, int c2, unsigned long long* bar,
                                            unsigned short mask,
                                            const char* site = __builtin_FILE()) {
  const int32_t c[3] = {c0, c1, c2};
  ::warptrace_host::TmaMulticast(smem_dst, map, c, 3, bar, mask,
                                 "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                                 "complete_tx::bytes.multicast::cluster",
                                 site);
}

#else  // the GPU

#if __CUDA_ARCH__ >= 900

#define WARPTRACE_CLUSTER_SREG(fn, reg)                    \
  __device__ __forceinline__ unsigned int fn() {           \
    unsigned int r;                                        \
    asm volatile("mov.u32 %0, " reg ";" : "=r"(r));        \
    return r;                                              \
  }
WARPTRACE_CLUSTER_SREG(warptrace_cluster_ctarank, "%%cluster_ctarank")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_nctarank, "%%cluster_nctarank")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_id_x, "%%clusterid.x")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_id_y, "%%clusterid.y")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_id_z, "%%clusterid.z")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_dim_x, "%%cluster_nctaid.x")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_dim_y, "%%cluster_nctaid.y")
WARPTRACE_CLUSTER_SREG(warptrace_cluster_dim_z, "%%cluster_nctaid.z")
#undef WARPTRACE_CLUSTER_SREG

__device__ __forceinline__ void warptrace_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;" : : : "memory");
}
__device__ __forceinline__ void warptrace_cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" : : :);
}
__device__ __forceinline__ void warptrace_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" : : : "memory");
}
__device__ __forceinline__ void warptrace_cluster_sync() {
  warptrace_cluster_arrive();
  warptrace_cluster_wait();
}

template <typename T>
__device__ __forceinline__ T* warptrace_cluster_map(T* p, unsigned int rank) {
  unsigned long long out;
  asm volatile("mapa.u64 %0, %1, %2;"
               : "=l"(out)
               : "l"(reinterpret_cast<unsigned long long>(p)), "r"(rank));
  return reinterpret_cast<T*>(out);
}
__device__ __forceinline__ unsigned int warptrace_cluster_map_shared(const void* p,
                                                                     unsigned int rank) {
  unsigned int out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(out)
               : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(p))), "r"(rank));
  return out;
}
__device__ __forceinline__ unsigned int warptrace_ld_shared_cluster_u32(unsigned int a) {
  unsigned int v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ float warptrace_ld_shared_cluster_f32(unsigned int a) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ void warptrace_st_shared_cluster_u32(unsigned int a,
                                                                unsigned int v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" : : "r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void warptrace_st_shared_cluster_f32(unsigned int a, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" : : "r"(a), "f"(v) : "memory");
}
__device__ __forceinline__ void warptrace_red_shared_cluster_add_u32(unsigned int a,
                                                                     unsigned int v) {
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" : : "r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void warptrace_mbarrier_arrive_cluster(unsigned long long* bar,
                                                                  unsigned int rank) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n\t}"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar))), "r"(rank)
      : "memory");
}
__device__ __forceinline__ void warptrace_fence_acq_rel_cluster() {
  asm volatile("fence.acq_rel.cluster;" : : : "memory");
}

// .multicast::cluster is sm_90a (and later a/f targets); a kernel calling these requires
// TargetFeature::kMulticast, so it is compiled for sm_90a.
__device__ __forceinline__ void warptrace_tma_load_2d_multicast(void* smem_dst,
                                                                const CUtensorMap* map, int c0,
                                                                int c1, unsigned long long* bar,
                                                                unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst))),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar))), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void warptrace_tma_load_3d_multicast(void* smem_dst,
                                                                const CUtensorMap* map, int c0,
                                                                int c1, int c2,
                                                                unsigned long long* bar,
                                                                unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst))),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar))), "h"(mask)
      : "memory");
}

#endif  // __CUDA_ARCH__ >= 900: before it there are no clusters (the names are undeclared)

#endif  // WARPTRACE_HOST_BACKEND

#endif  // WARPTRACE_CLUSTER_SM90_CUH_
