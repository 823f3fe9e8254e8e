#include "jit/host/shared_object.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace::host {

absl::StatusOr<std::unique_ptr<SharedObject>> SharedObject::Load(absl::string_view bytes,
                                                                 absl::string_view name) {
  // dlopen needs a path, and the dynamic loader matches already-loaded objects by path: a
  // unique one per load (a C++ shared object with STB_GNU_UNIQUE symbols is never unloaded,
  // so a reused path, e.g. /proc/self/fd/N of a memfd, could return a stale kernel).
  llvm::SmallString<128> path;
  const std::string prefix = absl::StrCat("warptrace-", name);
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(prefix, "so", fd, path)) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a file to load kernel ", name, " from: ", ec.message()));
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << llvm::StringRef(bytes.data(), bytes.size());
    out.close();
    if (out.has_error()) {
      std::error_code ec = out.error();
      out.clear_error();
      llvm::sys::fs::remove(path);
      return absl::UnavailableError(
          absl::StrCat("cannot write ", path.str().str(), ": ", ec.message()));
    }
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  llvm::sys::fs::remove(path);  // the mapping keeps the contents alive
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the host build of kernel ", name, ": ", dlerror()));
  }
  return std::unique_ptr<SharedObject>(new SharedObject(handle));
}

SharedObject::~SharedObject() { dlclose(handle_); }

void* SharedObject::Symbol(const char* symbol) const { return dlsym(handle_, symbol); }

}  // namespace warptrace::host
