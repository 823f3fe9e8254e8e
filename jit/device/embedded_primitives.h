// warptrace_primitives.cuh (named barriers, mbarriers, cp.async, bulk copies, spin-wait
// helpers; see the header), embedded at build time for in-memory compiler requests: add it to
// CompileRequest::headers and `#include "warptrace_primitives.cuh"`. The host backend adds it
// by itself.
#ifndef WARPTRACE_JIT_DEVICE_EMBEDDED_PRIMITIVES_H_
#define WARPTRACE_JIT_DEVICE_EMBEDDED_PRIMITIVES_H_

#include <vector>

#include "format/embedded_headers.h"

namespace warptrace {

const std::vector<EmbeddedFile>& EmbeddedPrimitivesHeaders();

}  // namespace warptrace

#endif  // WARPTRACE_JIT_DEVICE_EMBEDDED_PRIMITIVES_H_
