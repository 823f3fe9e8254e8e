// Lowering CUDA source for the host backend's C++ compiler, keeping every line where it was
// (so diagnostics quote the user's lines):
//
//   __shared__ [__align__(n)] T name[dims];   ->  auto& name =
//       ::warptrace_host::Shared<T[dims], n>(<site>, "name");   (per-block storage)
//   extern __shared__ [__align__(n)] T name[];  ->  T* const name =
//       ::warptrace_host::DynamicShared<T>();
//   asm [volatile] (...)                      ->  a `#pragma GCC error` naming the inline
//       PTX and saying that it needs a GPU (only where the preprocessor keeps the code)
//   acc[...]  (after the first wgmma call, for each array passed to one as its accumulator)
//       ->  ::warptrace_host::wgmma::Access(acc, "acc", __builtin_FILE())[...]: the access
//       fails the launch while a wgmma on it is pending (wgmma_host.h); its declarator
//       (`float acc[64]`, after a type or as a later declarator) and `&acc[...]` are left
//       alone
//
// A `__shared__` declaration of another form (several declarators, an initializer) is left
// alone: cuda_on_cpu.h turns any `__shared__` left over into a compile error that says
// what to write instead. Comments, string literals and preprocessor lines are not touched.
#ifndef WARPTRACE_JIT_HOST_SOURCE_LOWERING_H_
#define WARPTRACE_JIT_HOST_SOURCE_LOWERING_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace warptrace::host {

// Lowers `source`. `*next_site` numbers the static __shared__ declarations (unique within
// one translation unit: pass the same counter for every file of it).
std::string LowerForHost(absl::string_view source, uint32_t* next_site);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_SOURCE_LOWERING_H_
