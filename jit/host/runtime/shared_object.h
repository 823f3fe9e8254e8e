// SharedObject: a shared object loaded from bytes in memory (written to a uniquely named
// temporary file, dlopen'ed with RTLD_NOW | RTLD_LOCAL, and the file removed), unloaded when
// destroyed. Every Load is a separate copy with its own statics, even for identical bytes.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SharedObject> so, SharedObject::Load(bytes, "gemm"));
//   auto entry = reinterpret_cast<void (*)(void**)>(so->Symbol("entry"));  // null if absent
//
// Thread-safe (dlsym is).
#ifndef WARPTRACE_JIT_HOST_SHARED_OBJECT_H_
#define WARPTRACE_JIT_HOST_SHARED_OBJECT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace::host {

class SharedObject {
 public:
  // Errors: Unavailable when the temporary file cannot be written; InvalidArgument when the
  // dynamic loader rejects the bytes (with dlerror's message), naming `name`.
  static absl::StatusOr<std::unique_ptr<SharedObject>> Load(absl::string_view bytes,
                                                           absl::string_view name);
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  void* Symbol(const char* symbol) const;

 private:
  explicit SharedObject(void* handle) : handle_(handle) {}
  void* handle_;
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_SHARED_OBJECT_H_
