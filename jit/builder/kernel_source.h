// KernelSource: what the emitter produces and what a Device loads. A complete CUDA
// translation unit plus what is needed to compile it (in-memory headers), launch it (the
// parameter list and launch shape) and decode its trace (the layout, when profiled).
//
// Conventions shared by the emitter (jit/emit/emitter.h) and the devices (jit/platform/device.h):
//   * The kernel is `extern "C" __global__ void <kernel_name>(params...)`. When profiled,
//     the last parameter is `unsigned int* warptrace_trace` (the trace buffer).
//   * The source includes "recorder.cuh" (embedded; see format/embedded_headers.h)
//     only when profiled.
//   * CUDA-only constructs are spelled through macros the devices define, so that the same
//     text compiles as host C++ for the CPU backend:
//       WARPTRACE_DYNAMIC_SHARED(type, name)   declares the dynamic shared memory array
//     Everything else emitted is plain CUDA C++ that the host backend also compiles: the
//     CUDA-on-CPU header (jit/host/device/cuda_on_cpu.h, whose first comment is the list of what it
//     supports) and the device primitives (jit/primitives/warptrace_primitives.cuh: named and
//     phase barriers, async copies), which both backends include.
//   * At the end, under `#ifdef WARPTRACE_HOST_BACKEND`, the emitter writes
//       extern "C" void <host_entry>(void** args) { <kernel_name>(*(T0*)args[0], ...); }
//     which the host backend calls once per CUDA thread (args as in cuLaunchKernel).
#ifndef WARPTRACE_JIT_BUILDER_KERNEL_SOURCE_H_
#define WARPTRACE_JIT_BUILDER_KERNEL_SOURCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/embedded_headers.h"
#include "format/layout.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

struct KernelParam {
  std::string type;  // C++ type as written in the signature: "const float*", "int"
  std::string name;
  uint32_t size = 0;  // bytes of the argument value (8 for pointers)
  bool is_pointer = false;
  // `type` without the cv-qualifiers of a by-value scalar: "int" for "const int" or
  // "int const"; a pointer type as written ("const float*").
  std::string ValueType() const {
    if (is_pointer) return type;
    std::string out;
    std::string_view rest = type;
    while (!rest.empty()) {
      const size_t space = rest.find(' ');
      const std::string_view word = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      if (word.empty() || word == "const" || word == "volatile") continue;
      if (!out.empty()) out.push_back(' ');
      out.append(word);
    }
    return out;
  }
  // A TMA tensor map (KernelBuilder::Param("CUtensorMap", name)): 128 bytes by value,
  // emitted `const __grid_constant__ CUtensorMap name`, passed a KernelArg::TensorMap.
  bool is_tensor_map() const { return !is_pointer && type == "CUtensorMap"; }
  friend bool operator==(const KernelParam&, const KernelParam&) = default;
};

struct KernelSource {
  std::string kernel_name;
  std::string host_entry;            // "warptrace_host_entry_<kernel_name>"
  std::string source;                // the complete translation unit
  std::vector<EmbeddedFile> headers; // in-memory headers it includes
  std::vector<KernelParam> params;   // in signature order; the trace buffer last if profiled
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
  // The dynamic shared memory base's alignment (DynamicSharedDecl::align for a built
  // kernel): the host backend places the base on it; a GPU gets it from the declaration.
  uint32_t dynamic_shared_align = 16;
  // The thread-block cluster shape (Kernel::cluster; 1x1x1: no clusters). A device launches
  // with it: CudaDevice through cuLaunchKernelEx's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, the
  // host backend by running each cluster's CTAs together.
  Dim3 cluster;
  // More than 8 CTAs per cluster: the kernel opts into non-portable cluster sizes
  // (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
  bool non_portable_cluster = false;
  // What the kernel requires of its CUDA target (Kernel::requirements): a device compiles
  // for the target these resolve to (sm_90 -> sm_90a for wgmma) or fails naming the
  // construct and the target.
  TargetRequirements requirements;
  bool profiled = false;
  // When profiled: the trace layout (capacity from the plan, placement as chosen).
  std::optional<TraceLayout> layout;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_KERNEL_SOURCE_H_
