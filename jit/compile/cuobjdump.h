// cuobjdump: finding it (the CUDA toolkit's, or the PyPI wheel's) and listing a cubin's
// SASS and resource usage with it. No GPU needed.
//
//   ASSIGN_OR_RETURN(std::string cuobjdump, LocateCuobjdump(""));
//   ASSIGN_OR_RETURN(CubinListing listing, DisassembleCubin(compiled.cubin, cuobjdump));
//   // listing.sass: cuobjdump -sass; listing.res_usage: cuobjdump -res-usage
//
// Thread-safe: every call works in its own temporary directory.
#ifndef WARPTRACE_JIT_COMPILE_CUOBJDUMP_H_
#define WARPTRACE_JIT_COMPILE_CUOBJDUMP_H_

#include <string>

#include "absl/status/statusor.h"

namespace warptrace {

// What `cuobjdump -sass` and `cuobjdump -res-usage` print for one cubin, all its kernels.
struct CubinListing {
  std::string sass;
  std::string res_usage;
};
// Runs `cuobjdump` twice on a cubin (it takes one input file per call). Internal if it
// cannot be run or fails.
absl::StatusOr<CubinListing> DisassembleCubin(const std::string& cubin,
                                                const std::string& cuobjdump);

// Finds cuobjdump: `flag` if non-empty, else $CUOBJDUMP if set (each must be executable),
// else cuobjdump on PATH, else /usr/local/cuda/bin, else the PyPI wheel
// nvidia-cuda-cuobjdump (<site-packages>/nvidia/*/bin/cuobjdump) in the known places
// ($VIRTUAL_ENV, /usr/local/lib/python3*/dist-packages where tools/setup.sh installs it,
// ~/.local), else next to the `nvidia` package of every python3 on PATH and of
// /usr/bin/python3 (the first python3 on PATH may be a pyenv or venv one without it).
// NotFound naming everything tried otherwise.
absl::StatusOr<std::string> LocateCuobjdump(const std::string& flag);
// LocateCuobjdump's path, or empty when none is found.
std::string FindCuobjdump(const std::string& flag);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_CUOBJDUMP_H_
