// DiskCache: a directory of immutable blobs (compiled cubins, host shared objects) keyed by a
// content hash, shared by every warptrace process of the user.
//
//   ASSIGN_OR_RETURN(std::string dir, DiskCache::DefaultDirectory());
//   DiskCache cache(dir);
//   CacheKey key;
//   key.Add("cubin-v1").Add(source).Add(compiler_version);
//   std::string digest = key.Digest();            // 64 hex digits (SHA-256)
//   if (std::optional<std::string> blob = cache.Get(digest)) { ... }
//   else RETURN_IF_ERROR(cache.Put(digest, produce()));
//
// Every entry is one file "<digest>.<suffix>" written atomically (a temporary file in the
// same directory, then rename), so readers never see a partial entry even with concurrent
// writers. The file starts with a header (magic, format version, payload length, xxHash64
// of the payload, the digest itself); an entry whose header, length or checksum does not
// match (truncated, bit-flipped, written by another format) is counted in
// stats().corrupted, removed, and reported as a miss so the caller recomputes it.
//
// Thread-safe. A cache never makes the caller fail: read errors are misses, and Put's
// Status is for the caller to count (stats().write_failures counts them too).
#ifndef WARPTRACE_JIT_COMPILE_DISK_CACHE_H_
#define WARPTRACE_JIT_COMPILE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/SHA256.h"

namespace warptrace {

// Builds a SHA-256 digest over a sequence of fields. Each field is length-prefixed, so
// ("ab", "c") and ("a", "bc") hash differently.
class CacheKey {
 public:
  CacheKey& Add(absl::string_view field);
  CacheKey& Add(uint64_t value);
  // 64 lowercase hex digits. Call once.
  std::string Digest();

 private:
  llvm::SHA256 sha_;
};

struct DiskCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;           // no entry (including dropped corrupted ones)
  uint64_t corrupted = 0;        // entries found damaged, removed and treated as misses
  uint64_t write_failures = 0;   // Puts that failed (directory not writable, disk full)
};

class DiskCache {
 public:
  // The cache directory: $WARPTRACE_CACHE_DIR if set and non-empty, else
  // $XDG_CACHE_HOME/warptrace, else $HOME/.cache/warptrace. FailedPrecondition when none of
  // these variables is set.
  static absl::StatusOr<std::string> DefaultDirectory();

  // `suffix` names the kind of entry in file names ("cubin", "so"). The directory is created
  // on the first Put.
  DiskCache(std::string directory, std::string suffix);

  // The payload stored under `digest`, or nullopt (a miss, or a corrupted entry now removed).
  std::optional<std::string> Get(absl::string_view digest);

  // Stores `payload` under `digest`, atomically replacing any previous entry. Errors:
  // Unavailable when the directory cannot be created or written (with the OS's reason).
  absl::Status Put(absl::string_view digest, absl::string_view payload);

  // The file that holds `digest`'s entry (whether or not it exists).
  std::string PathFor(absl::string_view digest) const;
  const std::string& directory() const { return directory_; }
  DiskCacheStats stats() const;

 private:
  std::string directory_;
  std::string suffix_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, corrupted_{0}, write_failures_{0};
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_DISK_CACHE_H_
