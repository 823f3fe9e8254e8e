// Lowering CUDA source for the host backend's C++ compiler, keeping every line where it was
// (so diagnostics quote the user's lines):
//
//   __shared__ [__align__(n)] T name[dims];   ->  auto& name =
//       ::warptrace_host::Shared<T[dims], n>(<site>, "name");   (per-block storage)
//   extern __shared__ [__align__(n)] T name[];  ->  T* const name =
//       ::warptrace_host::DynamicShared<T>("name");
//   asm [volatile] (...)                      ->  a `#pragma GCC error` naming the inline
//       PTX and saying that it needs a GPU (only where the preprocessor keeps the code)
//   acc[i][j]  (a subscript expression of an identifier that some wgmma call in the source
//       takes as its accumulator or, RS form, its A fragment)
//       ->  ::warptrace_host::wgmma::Access(acc[i][j], "acc", __builtin_FILE()), which decides
//       at run time, by the expression's type and address, what it is (wgmma_host.h): an
//       element of a pending wgmma's registers fails the launch, any element access is
//       noted for the wgmma.fence rule, and a (sub-)array passed on (to a wgmma or to a
//       helper) is no access. The names over-approximate (a helper's parameter, a name
//       reused in another scope): an extra wrap costs a check, never a false alarm.
//       Declarators (`float acc[64]`, after a type or as a later declarator), members
//       (`s.acc[i]`, `p->acc[i]`, `ns::acc[i]`) and `&acc[...]` are left alone.
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

// Sanitize mode: puts `WARPTRACE_HOST_STATEMENT() ` (cuda_on_cpu.h: stores the statement's
// builder path, its #line file name, in the thread's WarptraceHostThread::statement) at the
// start of the first line of each builder construct the emitter attributed (`#line 1
// "kernel ..."`) inside a function body, when that line starts a statement; lines stay
// where they were.
std::string MarkStatements(absl::string_view source);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_SOURCE_LOWERING_H_
