// The host backend's headers, embedded at build time (tools/embed_files.py) so HostDevice
// writes them next to the kernel source it compiles; nothing is read from the source tree at
// run time: "cuda_on_cpu.h" (force-included), "host_abi.h" and "warptrace_primitives.cuh"
// (which it includes).
#ifndef WARPTRACE_JIT_HOST_EMBEDDED_HOST_HEADERS_H_
#define WARPTRACE_JIT_HOST_EMBEDDED_HOST_HEADERS_H_

#include <vector>

#include "format/embedded_headers.h"

namespace warptrace {

const std::vector<EmbeddedFile>& EmbeddedHostHeaders();

}  // namespace warptrace

#endif  // WARPTRACE_JIT_HOST_EMBEDDED_HOST_HEADERS_H_
