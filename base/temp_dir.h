// TempDir: a fresh directory under the system's temporary directory ($TMPDIR or /tmp),
// removed with everything in it when the TempDir is destroyed.
//
//   ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host"));
//   RETURN_IF_ERROR(WriteFileAtomically(dir.File("kernel.cc"), source));
//   ...                                   // dir.path() and its files are gone after scope
//
// Move-only; a moved-from TempDir owns nothing. Not thread-safe (one owner).
#ifndef WARPTRACE_BASE_TEMP_DIR_H_
#define WARPTRACE_BASE_TEMP_DIR_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

class TempDir {
 public:
  // A new directory named "<prefix>-<random>". The file system's error code otherwise
  // (base/status_adapters.h), e.g. PermissionDenied or ResourceExhausted.
  static absl::StatusOr<TempDir> Create(absl::string_view prefix);

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  // The directory's absolute path; empty for a moved-from TempDir.
  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(absl::string_view name) const;
  // Keeps the directory (e.g. a failed compile's inputs, for the user to look at): it is
  // no longer removed, and this TempDir owns nothing. Returns its path.
  std::string Keep() { return std::exchange(path_, ""); }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void Remove();

  std::string path_;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_TEMP_DIR_H_
