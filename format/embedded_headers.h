// The device recorder's headers, embedded in the binary at build time (a genrule turns
// trace_abi.h and recorder.cuh into string constants) so that NVRTC and the host backend
// get them in memory: nothing is read from disk at run time.
//
//   for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
//     // f.name is the include name ("trace_abi.h", "recorder.cuh"), f.contents the text.
//   }
#ifndef WARPTRACE_FORMAT_EMBEDDED_HEADERS_H_
#define WARPTRACE_FORMAT_EMBEDDED_HEADERS_H_

#include <vector>

#include "base/embedded_file.h"

namespace warptrace {

// The recorder's headers: "trace_abi.h" and "recorder.cuh". Generated code includes
// "recorder.cuh", which includes "trace_abi.h".
const std::vector<EmbeddedFile>& EmbeddedDeviceHeaders();

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_EMBEDDED_HEADERS_H_
