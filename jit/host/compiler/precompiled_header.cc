#include "jit/host/compiler/precompiled_header.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "base/status_adapters.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "jit/compile/disk_cache.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"

namespace warptrace::host {
namespace {

constexpr char kFormat[] = "warptrace host pch 1";
constexpr char kManifest[] = "manifest";
const ReadOptions kEntryRead = {.role = "precompiled header entry", .register_as_input = false};
const WriteOptions kEntryWrite = {.role = "precompiled header entry"};

struct Dependency {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const Dependency&) const = default;
};

struct Manifest {
  uint64_t gch_size = 0;
  uint64_t gch_hash = 0;
  std::vector<Dependency> dependencies;
};

std::string Join(absl::string_view dir, absl::string_view name) {
  return absl::StrCat(dir, "/", name);
}

std::string GchName(const PrecompiledHeaderRequest& request) {
  return absl::StrCat(request.headers[0].name, request.suffix);
}

absl::StatusOr<Dependency> Stat(const std::string& path) {
  llvm::sys::fs::file_status status;
  RETURN_IF_ERROR(ToStatus(llvm::sys::fs::status(path, status),
                           absl::StrCat("examining ", path, " (a precompiled header input)")));
  Dependency dependency;
  dependency.path = path;
  dependency.size = status.getSize();
  dependency.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            status.getLastModificationTime().time_since_epoch())
                            .count();
  return dependency;
}

std::string FormatManifest(const Manifest& manifest) {
  std::string text = absl::StrCat(kFormat, "\ngch ", manifest.gch_size, " ",
                                  manifest.gch_hash, "\n");
  for (const Dependency& d : manifest.dependencies) {
    absl::StrAppend(&text, "dep ", d.size, " ", d.mtime_ns, " ", d.path, "\n");
  }
  return text;
}

std::optional<Manifest> ParseManifest(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.size() < 2 || lines[0] != kFormat) return std::nullopt;
  Manifest manifest;
  std::vector<absl::string_view> gch = absl::StrSplit(lines[1], ' ');
  if (gch.size() != 3 || gch[0] != "gch" || !absl::SimpleAtoi(gch[1], &manifest.gch_size) ||
      !absl::SimpleAtoi(gch[2], &manifest.gch_hash)) {
    return std::nullopt;
  }
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], absl::MaxSplits(' ', 3));
    Dependency d;
    if (f.size() != 4 || f[0] != "dep" || !absl::SimpleAtoi(f[1], &d.size) ||
        !absl::SimpleAtoi(f[2], &d.mtime_ns) || f[3].empty()) {
      return std::nullopt;
    }
    d.path = std::string(f[3]);
    manifest.dependencies.push_back(std::move(d));
  }
  return manifest;
}

// The prerequisites of a make rule written by -MD: "target: a b \<newline> c", with spaces
// in names escaped as "\ ".
std::vector<std::string> ParseDepFile(absl::string_view text) {
  const size_t colon = text.find(": ");
  std::vector<std::string> files;
  if (colon == absl::string_view::npos) return files;
  std::string current;
  for (size_t i = colon + 2; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\n')) {
      if (text[++i] == ' ') current += ' ';
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!current.empty()) files.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) files.push_back(std::move(current));
  return files;
}

// Why the entry in `dir` cannot serve `request` (NotFound: there is no manifest; DataLoss:
// damaged or stale), or OK with its dependencies in `*dependencies`.
absl::Status CheckEntry(const std::string& dir, const PrecompiledHeaderRequest& request,
                        std::vector<std::string>* dependencies) {
  absl::StatusOr<std::string> text = ReadFile(Join(dir, kManifest), kEntryRead);
  if (!text.ok()) return absl::NotFoundError(text.status().message());
  const std::optional<Manifest> manifest = ParseManifest(*text);
  if (!manifest) return absl::DataLossError(absl::StrCat("unreadable manifest in ", dir));
  for (const EmbeddedFile& header : request.headers) {
    absl::StatusOr<std::string> bytes = ReadFile(Join(dir, header.name), kEntryRead);
    if (!bytes.ok() || *bytes != header.contents) {
      return absl::DataLossError(absl::StrCat(header.name, " in ", dir, " differs"));
    }
  }
  dependencies->clear();
  for (const Dependency& recorded : manifest->dependencies) {
    absl::StatusOr<Dependency> now = Stat(recorded.path);
    if (!now.ok() || !(*now == recorded)) {
      return absl::DataLossError(absl::StrCat(recorded.path, " changed since ", dir, " was built"));
    }
    dependencies->push_back(recorded.path);
  }
  absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> gch =
      MapFile(Join(dir, GchName(request)), kEntryRead);
  if (!gch.ok() || (*gch)->getBufferSize() != manifest->gch_size ||
      llvm::xxHash64((*gch)->getBuffer()) != manifest->gch_hash) {
    return absl::DataLossError(absl::StrCat(GchName(request), " in ", dir,
                                            " is missing, truncated or damaged"));
  }
  return absl::OkStatus();
}

// An exclusive flock(2) on a file, released when destroyed (or when the process dies).
class FileLock {
 public:
  static absl::StatusOr<FileLock> Acquire(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("opening the lock file ", path, ": ", std::strerror(errno)));
    }
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return absl::UnavailableError(absl::StrCat("locking ", path, ": ", std::strerror(error)));
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// Compiles the header into a temporary .gch beside its final name (so the rename is atomic),
// and returns the files the compiler read outside `dir`.
absl::StatusOr<std::vector<std::string>> CompileGch(const std::string& dir,
                                                    const PrecompiledHeaderRequest& request,
                                                    const std::string& temporary) {
  ASSIGN_OR_RETURN(TempDir work, TempDir::Create("warptrace-pch"));
  const std::string deps_file = work.File("gch.d");
  std::vector<std::string> argv = {request.compiler};
  argv.insert(argv.end(), request.flags.begin(), request.flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", Join(dir, request.headers[0].name), "-MD", "-MF",
                           deps_file, "-o", temporary});
  ASSIGN_OR_RETURN(ProgramResult result, RunProgram(argv));
  if (result.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("precompiling ", request.headers[0].name,
                                               " failed (exit ", result.exit_code, "): ",
                                               absl::StrJoin(argv, " "), "\n", result.output));
  }
  ASSIGN_OR_RETURN(std::string deps, ReadFile(deps_file, kEntryRead));
  std::vector<std::string> outside;
  for (std::string& file : ParseDepFile(deps)) {
    if (!absl::StartsWith(file, absl::StrCat(dir, "/"))) outside.push_back(std::move(file));
  }
  return outside;
}

// Builds the entry in `dir` (whose lock the caller holds): headers, .gch, manifest last.
absl::StatusOr<std::vector<std::string>> BuildEntry(const std::string& dir,
                                                    const PrecompiledHeaderRequest& request) {
  for (const EmbeddedFile& header : request.headers) {
    RETURN_IF_ERROR(WriteFileAtomically(Join(dir, header.name), header.contents, kEntryWrite));
  }
  const std::string gch = Join(dir, GchName(request));
  const std::string temporary = absl::StrCat(gch, ".tmp-", ::getpid());
  absl::StatusOr<std::vector<std::string>> dependencies = CompileGch(dir, request, temporary);
  Manifest manifest;
  absl::Status status = dependencies.status();
  if (status.ok()) {
    for (const std::string& path : *dependencies) {
      absl::StatusOr<Dependency> dependency = Stat(path);
      if (!dependency.ok()) {
        status = dependency.status();
        break;
      }
      manifest.dependencies.push_back(*std::move(dependency));
    }
  }
  if (status.ok()) {
    absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> bytes = MapFile(temporary, kEntryRead);
    status = bytes.status();
    if (status.ok()) {
      manifest.gch_size = (*bytes)->getBufferSize();
      manifest.gch_hash = llvm::xxHash64((*bytes)->getBuffer());
    }
  }
  if (status.ok()) {
    status = ToStatus(llvm::sys::fs::rename(temporary, gch),
                      absl::StrCat("renaming the precompiled header into ", gch));
  }
  if (!status.ok()) {
    llvm::sys::fs::remove(temporary);
    return status;
  }
  RETURN_IF_ERROR(WriteFileAtomically(Join(dir, kManifest), FormatManifest(manifest), kEntryWrite));
  return dependencies;
}

}  // namespace

PrecompiledHeaders& PrecompiledHeaders::ForProcess() {
  // Never destroyed (a compile may still run while statics are destroyed); what it keeps in
  // a temporary directory is removed at exit.
  static PrecompiledHeaders* const store = [] {
    auto* process = new PrecompiledHeaders();
    std::atexit([] { ForProcess().RemoveTemporaryEntries(); });
    return process;
  }();
  return *store;
}

void PrecompiledHeaders::RemoveTemporaryEntries() {
  absl::MutexLock lock(&mu_);
  if (!temp_root_) return;
  const std::string root = absl::StrCat(temp_root_->path(), "/");
  for (const auto& [key, dir] : entry_of_) {
    if (absl::StartsWith(dir, root)) ready_.erase(key);
  }
  temp_root_.reset();
}

std::string PrecompiledHeaders::KeyFor(const PrecompiledHeaderRequest& request) {
  CacheKey key;
  key.Add("host-pch-v1").Add(request.compiler).Add(request.compiler_version).Add(request.suffix);
  key.Add(request.flags.size());
  for (const std::string& flag : request.flags) key.Add(flag);
  key.Add(request.headers.size());
  for (const EmbeddedFile& header : request.headers) key.Add(header.name).Add(header.contents);
  return key.Digest();
}

absl::StatusOr<std::string> PrecompiledHeaders::EntryDirectory(
    const PrecompiledHeaderRequest& request, const std::string& key) {
  std::string root;
  if (!request.directory.empty()) {
    root = Join(request.directory, "host-pch");
  } else {
    if (!temp_root_) {
      ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host-pch"));
      temp_root_ = std::move(dir);
    }
    root = temp_root_->path();
  }
  const std::string dir = Join(root, key);
  RETURN_IF_ERROR(ToStatus(llvm::sys::fs::create_directories(dir),
                           absl::StrCat("creating the precompiled header directory ", dir)));
  return dir;
}

absl::StatusOr<PrecompiledHeader> PrecompiledHeaders::Get(
    const PrecompiledHeaderRequest& request) {
  if (request.headers.empty()) {
    return absl::InvalidArgumentError("a precompiled header request without a header");
  }
  const std::string key = KeyFor(request);
  absl::MutexLock lock(&mu_);
  if (invalidated_.contains(key)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the precompiled header ", key, " failed a compile in this process"));
  }
  if (auto it = ready_.find(key); it != ready_.end()) {
    ++stats_.memory_hits;
    PrecompiledHeader pch = it->second;
    pch.built = false;
    return pch;
  }
  ASSIGN_OR_RETURN(std::string dir, EntryDirectory(request, key));
  PrecompiledHeader pch;
  pch.key = key;
  pch.include_path = Join(dir, request.headers[0].name);
  absl::Status found = CheckEntry(dir, request, &pch.dependencies);
  if (!found.ok()) {
    // Another process may be building it: wait for it, then look again.
    ASSIGN_OR_RETURN(FileLock file_lock, FileLock::Acquire(Join(dir, "lock")));
    found = CheckEntry(dir, request, &pch.dependencies);
    if (!found.ok()) {
      if (found.code() != absl::StatusCode::kNotFound) ++stats_.rejected;
      absl::StatusOr<std::vector<std::string>> built = BuildEntry(dir, request);
      if (!built.ok()) {
        ++stats_.build_failures;
        return built.status();
      }
      ++stats_.builds;
      pch.dependencies = *std::move(built);
      pch.built = true;
    }
  }
  if (!pch.built) ++stats_.disk_hits;
  ready_[key] = pch;
  entry_of_[key] = dir;
  return pch;
}

void PrecompiledHeaders::Invalidate(const PrecompiledHeader& pch) {
  absl::MutexLock lock(&mu_);
  if (!invalidated_.insert(pch.key).second) return;
  ++stats_.invalidated;
  ready_.erase(pch.key);
  if (auto it = entry_of_.find(pch.key); it != entry_of_.end()) {
    llvm::sys::fs::remove(Join(it->second, kManifest));
  }
}

PrecompiledHeaderStats PrecompiledHeaders::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace warptrace::host
