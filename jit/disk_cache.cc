#include "jit/compile/disk_cache.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace warptrace {
namespace {

// On-disk entry: magic (8 bytes) | payload length (u64) | xxHash64(payload) (u64) |
// digest length (u32) | digest | payload. Integers little-endian.
constexpr char kMagic[8] = {'W', 'T', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr size_t kFixedHeaderBytes = sizeof(kMagic) + 8 + 8 + 4;

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t ReadLittleEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(data[i])) << (8 * i);
  }
  return value;
}

uint64_t Checksum(absl::string_view payload) {
  return llvm::xxHash64(llvm::StringRef(payload.data(), payload.size()));
}

}  // namespace

CacheKey& CacheKey::Add(absl::string_view field) {
  std::string length;
  AppendLittleEndian(length, field.size(), 8);
  sha_.update(llvm::StringRef(length));
  sha_.update(llvm::StringRef(field.data(), field.size()));
  return *this;
}

CacheKey& CacheKey::Add(uint64_t value) {
  std::string bytes;
  AppendLittleEndian(bytes, value, 8);
  return Add(bytes);
}

std::string CacheKey::Digest() {
  llvm::StringRef raw = sha_.final();
  return absl::BytesToHexString(absl::string_view(raw.data(), raw.size()));
}

absl::StatusOr<std::string> DiskCache::DefaultDirectory() {
  if (const char* dir = std::getenv("WARPTRACE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/warptrace");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.cache/warptrace");
  }
  return absl::FailedPreconditionError(
      "no cache directory: set WARPTRACE_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
}

DiskCache::DiskCache(std::string directory, std::string suffix)
    : directory_(std::move(directory)), suffix_(std::move(suffix)) {}

std::string DiskCache::PathFor(absl::string_view digest) const {
  return absl::StrCat(directory_, "/", digest, ".", suffix_);
}

std::optional<std::string> DiskCache::Get(absl::string_view digest) {
  const std::string path = PathFor(digest);
  // Not an input: a corrupted entry is removed and rewritten by this very process.
  absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      MapFile(path, {.role = "cache entry", .register_as_input = false});
  if (!file.ok()) {
    ++misses_;
    return std::nullopt;
  }
  const absl::string_view data((*file)->getBufferStart(), (*file)->getBufferSize());
  bool valid = data.size() >= kFixedHeaderBytes &&
               std::memcmp(data.data(), kMagic, sizeof(kMagic)) == 0;
  absl::string_view payload;
  if (valid) {
    const uint64_t length = ReadLittleEndian(data.data() + 8, 8);
    const uint64_t checksum = ReadLittleEndian(data.data() + 16, 8);
    const uint64_t digest_length = ReadLittleEndian(data.data() + 24, 4);
    const uint64_t header = kFixedHeaderBytes + digest_length;
    valid = digest_length == digest.size() && data.size() >= header &&
            data.substr(kFixedHeaderBytes, digest_length) == digest &&
            data.size() - header == length;
    if (valid) {
      payload = data.substr(header);
      valid = Checksum(payload) == checksum;
    }
  }
  if (!valid) {
    ++corrupted_;
    ++misses_;
    llvm::sys::fs::remove(path);  // a failed removal is retried at the next Put's rename
    return std::nullopt;
  }
  ++hits_;
  return std::string(payload);
}

absl::Status DiskCache::Put(absl::string_view digest, absl::string_view payload) {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory_)) {
    ++write_failures_;
    return absl::UnavailableError(absl::StrCat("cannot create the cache directory ", directory_,
                                               ": ", ec.message(),
                                               " (set WARPTRACE_CACHE_DIR to a writable one)"));
  }
  std::string header(kMagic, sizeof(kMagic));
  AppendLittleEndian(header, payload.size(), 8);
  AppendLittleEndian(header, Checksum(payload), 8);
  AppendLittleEndian(header, digest.size(), 4);
  header.append(digest.data(), digest.size());
  const std::string path = PathFor(digest);
  const absl::Status written = WriteFileAtomically(
      path,
      [&](llvm::raw_ostream& out) {
        out << llvm::StringRef(header) << llvm::StringRef(payload.data(), payload.size());
        return absl::OkStatus();
      },
      {.role = "cache entry"});
  if (!written.ok()) {
    ++write_failures_;
    // A cache is optional: whatever the file system said, the cache is unavailable.
    return absl::UnavailableError(written.message());
  }
  return absl::OkStatus();
}

DiskCacheStats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), corrupted_.load(), write_failures_.load()};
}

}  // namespace warptrace
