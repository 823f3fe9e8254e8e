// NvrtcProgram: owns an nvrtcProgram from its creation on (RAII), and reads its log.
//
//   NvrtcProgram program;
//   RETURN_IF_ERROR(ToStatus(nvrtcCreateProgram(program.out(), src, "k.cu", 0, nullptr,
//                                               nullptr), "creating k"));
//   const nvrtcResult compiled = nvrtcCompileProgram(program.get(), n, options);
//   ASSIGN_OR_RETURN(std::string log, program.Log("k"));
//   RETURN_IF_ERROR(ToStatus(compiled, "compiling k", log));
//
// Move-only; not thread-safe (one owner), as NVRTC programs are not.
#ifndef WARPTRACE_JIT_COMPILE_NVRTC_PROGRAM_H_
#define WARPTRACE_JIT_COMPILE_NVRTC_PROGRAM_H_

#include <nvrtc.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

class NvrtcProgram {
 public:
  NvrtcProgram() = default;
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  ~NvrtcProgram();

  // Where nvrtcCreateProgram writes the handle; the program is destroyed with this object.
  nvrtcProgram* out() { return &program_; }
  nvrtcProgram get() const { return program_; }

  // The program's log without trailing NULs and newlines. The NVRTC error (ToStatus, with
  // `what` in the context) when it cannot be read.
  absl::StatusOr<std::string> Log(absl::string_view what) const;

 private:
  nvrtcProgram program_ = nullptr;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_NVRTC_PROGRAM_H_
