#include "jit/host/runtime/shared_object.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/temp_dir.h"

namespace warptrace::host {

absl::StatusOr<std::unique_ptr<SharedObject>> SharedObject::Load(absl::string_view bytes,
                                                                 absl::string_view name) {
  // dlopen needs a path, and the dynamic loader matches already-loaded objects by path: a
  // unique one per load (a C++ shared object with STB_GNU_UNIQUE symbols is never unloaded,
  // so a reused path, e.g. /proc/self/fd/N of a memfd, could return a stale kernel).
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create(absl::StrCat("warptrace-", name)));
  const std::string path = dir.File(absl::StrCat(name, ".so"));
  RETURN_IF_ERROR(WriteFileAtomically(path, bytes, {.role = "host kernel shared object"}));
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  // `dir` and the file go at return: the mapping keeps the contents alive.
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the host build of kernel ", name, ": ", dlerror()));
  }
  return std::unique_ptr<SharedObject>(new SharedObject(handle));
}

SharedObject::~SharedObject() { dlclose(handle_); }

void* SharedObject::Symbol(const char* symbol) const { return dlsym(handle_, symbol); }

}  // namespace warptrace::host
