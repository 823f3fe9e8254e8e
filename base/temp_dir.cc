#include "base/temp_dir.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_adapters.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

namespace warptrace {

absl::StatusOr<TempDir> TempDir::Create(absl::string_view prefix) {
  llvm::SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          llvm::StringRef(prefix.data(), prefix.size()), path)) {
    return ToStatus(ec, absl::StrCat("creating a temporary directory ", prefix, "-*"));
  }
  return TempDir(std::string(path.str()));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, "");
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

void TempDir::Remove() {
  // Best effort: a directory that cannot be removed is left for the system's cleaner.
  if (!path_.empty()) (void)llvm::sys::fs::remove_directories(path_);
  path_.clear();
}

std::string TempDir::File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

}  // namespace warptrace
