// The example kernels' planted delays (--producer_delay / --consumer_delay): a raw statement
// that spins `cycles` SM cycles on clock64(), to make one side of a pipeline its bottleneck.
#ifndef WARPTRACE_JIT_KERNELS_BUSY_WORK_H_
#define WARPTRACE_JIT_KERNELS_BUSY_WORK_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace warptrace {

inline std::string BusyWork(uint32_t cycles) {
  return absl::StrCat("const long long delay_start = clock64();\n"
                      "while (clock64() - delay_start < ",
                      cycles, "ll) {\n}");
}

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_BUSY_WORK_H_
