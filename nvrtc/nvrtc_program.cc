#include "jit/compile/nvrtc_program.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/compile/nvrtc_status.h"

namespace warptrace {

NvrtcProgram::~NvrtcProgram() {
  if (program_ != nullptr) nvrtcDestroyProgram(&program_);
}

absl::StatusOr<std::string> NvrtcProgram::Log(absl::string_view what) const {
  size_t size = 0;
  RETURN_IF_ERROR(ToStatus(nvrtcGetProgramLogSize(program_, &size),
                           absl::StrCat("reading the log size of ", what)));
  std::string log(size, '\0');
  if (size > 0) {
    RETURN_IF_ERROR(
        ToStatus(nvrtcGetProgramLog(program_, log.data()), absl::StrCat("reading the log of ", what)));
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace warptrace
