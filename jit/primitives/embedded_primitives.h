// warptrace_primitives.cuh (named barriers, mbarriers, cp.async, bulk copies, spin-wait
// helpers; see the header) and math_constants.h (CUDA's CUDART_* constants, which NVRTC
// lacks), embedded at build time for in-memory compiler requests: add it to
// CompileRequest::headers and `#include "warptrace_primitives.cuh"`. The host backend adds it
// by itself.
#ifndef WARPTRACE_JIT_PRIMITIVES_EMBEDDED_PRIMITIVES_H_
#define WARPTRACE_JIT_PRIMITIVES_EMBEDDED_PRIMITIVES_H_

#include <vector>

#include "format/embedded_headers.h"

namespace warptrace {

const std::vector<EmbeddedFile>& EmbeddedPrimitivesHeaders();

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PRIMITIVES_EMBEDDED_PRIMITIVES_H_
