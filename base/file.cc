#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_adapters.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"

namespace warptrace {
namespace {

namespace fs = ::llvm::sys::fs;

llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

struct Input {
  std::string path;       // as the program named it, for messages
  std::string real_path;  // symlinks and ".." resolved
  fs::UniqueID id;        // device and inode: catches hard links
  std::string role;
};

// The files this process read, never forgotten: an output may not replace any of them.
class InputRegistry {
 public:
  static InputRegistry& Get() {
    static InputRegistry* const registry = new InputRegistry();
    return *registry;
  }

  void Add(Input input) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    for (const Input& known : inputs_) {
      if (known.id == input.id && known.real_path == input.real_path) return;
    }
    inputs_.push_back(std::move(input));
  }

  std::optional<Input> Find(const fs::UniqueID& id, absl::string_view real_path)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    for (const Input& known : inputs_) {
      if (known.id == id || known.real_path == real_path) return known;
    }
    return std::nullopt;
  }

 private:
  absl::Mutex mu_;
  std::vector<Input> inputs_ ABSL_GUARDED_BY(mu_);
};

std::string RealPath(absl::string_view path) {
  llvm::SmallString<256> real;
  if (fs::real_path(Ref(path), real)) return std::string(path);
  return std::string(real.str());
}

void Register(absl::string_view path, const fs::UniqueID& id, absl::string_view role) {
  InputRegistry::Get().Add(
      {std::string(path), RealPath(path), id, std::string(role)});
}

absl::Status NotAnInput(absl::string_view path, absl::string_view output_role) {
  if (path == "-") return absl::OkStatus();
  fs::file_status status;
  if (fs::status(Ref(path), status)) return absl::OkStatus();  // nothing there to replace
  std::optional<Input> input = InputRegistry::Get().Find(status.getUniqueID(), RealPath(path));
  if (!input.has_value()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "refusing to write the ", output_role, " to '", path, "': it is the ", input->role,
      " this program read ('", input->path,
      "'); an output never replaces an input: choose another path"));
}

// Streams into `os` (on descriptor `fd`), flushes, and turns a stream error into a Status
// (clearing it, or the stream's destructor aborts the process).
using FdWriter = std::function<absl::Status(llvm::raw_fd_ostream& os, int fd)>;
absl::Status WriteStream(llvm::raw_fd_ostream& os, int fd, const FdWriter& write,
                         absl::string_view context) {
  absl::Status status = write(os, fd);
  os.flush();
  if (os.has_error()) {
    const std::error_code ec = os.error();
    os.clear_error();
    if (status.ok()) status = ToStatus(ec, context);
  }
  return status;
}

std::error_code Errno() { return std::error_code(errno, std::generic_category()); }

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The file a path names, symlinks followed (also a dangling one: its target is created);
// the path itself when it is not a symlink. ELOOP after 40 links, as the kernel.
std::string FollowLinks(const std::string& path, std::error_code& ec) {
  std::string at = path;
  for (int hops = 0; hops < 40; ++hops) {
    char target[4096];
    const ssize_t n = ::readlink(at.c_str(), target, sizeof(target) - 1);
    if (n < 0) return at;  // not a symlink (or absent): this is the file
    target[n] = '\0';
    at = target[0] == '/' ? std::string(target) : DirName(at) + "/" + target;
  }
  ec = std::make_error_code(std::errc::too_many_symbolic_link_levels);
  return at;
}

bool ForceNamedTemporaries() {
  const char* v = std::getenv("WARPTRACE_NO_O_TMPFILE");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

// "NAME.tmp-PID-": the prefix of this process's named temporaries of NAME (the fallback where
// O_TMPFILE is missing, and the name an O_TMPFILE file is linked under for its rename).
std::string TempPrefix(const std::string& base, pid_t pid) {
  return absl::StrCat(base, ".tmp-", pid, "-");
}

// Removes "BASE.tmp-PID-XXXXXX" files in `dir` whose creating process is gone (a dump killed
// with SIGKILL, or a crash): they are nobody's. Best effort: what cannot be removed stays.
void SweepStaleTemporaries(const std::string& dir, const std::string& base) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = base + ".tmp-";
  while (const dirent* e = ::readdir(d)) {
    const absl::string_view name = e->d_name;
    if (!absl::StartsWith(name, prefix)) continue;
    const absl::string_view rest = name.substr(prefix.size());
    const size_t dash = rest.find('-');
    if (dash == absl::string_view::npos || rest.size() - dash - 1 != 6) continue;
    int64_t pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, dash), &pid) || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive
    ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

// An output file being written (see file.h, "Outputs"): a regular file (or a new one) goes
// to a temporary in the target's directory — unnamed (O_TMPFILE) where the file system has
// it, else "NAME.tmp-PID-XXXXXX" — renamed over the target by Commit; anything else (a
// character device, a FIFO, a socket) is opened and written in place. Destroying it
// uncommitted removes the temporary (closing an unnamed one is enough).
class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile() { Discard(); }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::error_code Open(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) return std::make_error_code(std::errc::is_a_directory);
      // A device, a FIFO: written in place, as cp or tee would (never replaced by a file).
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (fd_ < 0) return Errno();
      in_place_ = true;
      return {};
    }
    std::error_code ec;
    target_ = FollowLinks(path, ec);  // a symlink stays; the file it names is replaced
    if (ec) return ec;
    const std::string dir = DirName(target_);
    base_ = BaseName(target_);
    SweepStaleTemporaries(dir, base_);
    if (!ForceNamedTemporaries()) {
      // rw-rw-rw- less the umask (open(2) applies it): an output is data, never a program.
      fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
      if (fd_ >= 0) return {};
      if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return Errno();
    }
    return CreateNamed(dir, temp_);
  }

  int fd() const { return fd_; }

  // Puts the written file in place: the rename of the temporary (linked first when it has no
  // name); nothing for a file written in place.
  std::error_code Commit() {
    if (in_place_) {
      const int fd = std::exchange(fd_, -1);
      return ::close(fd) == 0 ? std::error_code() : Errno();
    }
    if (temp_.empty()) {
      // Unnamed: link it under a fresh temporary name, then rename that over the target (a
      // link cannot replace a file). A kill in between leaves a named temporary, which the
      // next write of this output sweeps.
      std::string name;
      std::error_code ec = LinkUnnamed(name);
      if (ec) return ec;
      temp_ = name;
    }
    if (::rename(temp_.c_str(), target_.c_str()) != 0) return Errno();
    temp_.clear();
    const int fd = std::exchange(fd_, -1);
    return ::close(fd) == 0 ? std::error_code() : Errno();
  }

  // Removes what was written to a temporary; a file written in place keeps what it got.
  void Discard() {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

 private:
  // A new "BASE.tmp-PID-XXXXXX" in `dir`, opened into fd_ (when `link_from` < 0) or made a
  // link of it. Retries names taken.
  std::error_code CreateNamed(const std::string& dir, std::string& name, int link_from = -1) {
    static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string candidate = absl::StrCat(dir, "/", TempPrefix(base_, ::getpid()));
      for (int i = 0; i < 6; ++i) candidate += kChars[random() % (sizeof(kChars) - 1)];
      if (link_from < 0) {
        fd_ = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ >= 0) {
          name = candidate;
          return {};
        }
      } else {
        const std::string proc = absl::StrCat("/proc/self/fd/", link_from);
        int rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW);
        if (rc != 0 && errno == ENOENT) {  // no /proc: needs CAP_DAC_READ_SEARCH
          rc = ::linkat(link_from, "", AT_FDCWD, candidate.c_str(), AT_EMPTY_PATH);
        }
        if (rc == 0) {
          name = candidate;
          return {};
        }
      }
      if (errno != EEXIST) return Errno();
    }
    return std::make_error_code(std::errc::file_exists);
  }

  std::error_code LinkUnnamed(std::string& name) {
    return CreateNamed(DirName(target_), name, fd_);
  }

  int fd_ = -1;
  bool in_place_ = false;
  std::string target_;  // the regular file replaced (symlinks followed)
  std::string base_;    // its name in its directory
  std::string temp_;    // the named temporary, while one exists
};

// WriteFileAtomically, the writer also given the descriptor ("-": stdout's).
absl::Status WriteFdAtomically(absl::string_view path, const FdWriter& write,
                               const WriteOptions& options) {
  const std::string context = absl::StrCat("writing ", options.role, " '", path, "'");
  if (path == "-") return WriteStream(llvm::outs(), STDOUT_FILENO, write, context);
  if (absl::Status s = NotAnInput(path, options.role); !s.ok()) return s;
  OutputFile file;  // an exception unwinding the writer removes the temporary too
  if (std::error_code ec = file.Open(std::string(path))) return ToStatus(ec, context);
  absl::Status status;
  {
    llvm::raw_fd_ostream os(file.fd(), /*shouldClose=*/false);
    // Its destructor aborts on an uncleared error: an exception leaves it cleared.
    struct ClearOnUnwind {
      llvm::raw_fd_ostream& os;
      ~ClearOnUnwind() { os.clear_error(); }
    } clear{os};
    status = WriteStream(os, file.fd(), write, context);
  }
  if (!status.ok()) return status;  // the temporary goes with `file`
  // Checked again just before the rename: the writer may have run for a long time.
  if (absl::Status s = NotAnInput(path, options.role); !s.ok()) return s;
  return ToStatus(file.Commit(), context);
}

}  // namespace

absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> MapFile(absl::string_view path,
                                                            const ReadOptions& options) {
  const std::string context = absl::StrCat("reading ", options.role, " '", path, "'");
  llvm::Expected<fs::file_t> fd = fs::openNativeFileForRead(Ref(path));
  if (!fd) return ToStatus(fd.takeError(), context);
  fs::file_status status;
  std::error_code ec = fs::status(*fd, status);
  if (!ec && status.type() == fs::file_type::directory_file) {
    ec = std::make_error_code(std::errc::is_a_directory);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = ec;
  if (!ec) {
    buffer = llvm::MemoryBuffer::getOpenFile(*fd, Ref(path), status.getSize(),
                                             /*RequiresNullTerminator=*/false);
  }
  fs::closeFile(*fd);
  if (!buffer) return ToStatus(buffer.getError(), context);
  if (options.register_as_input) Register(path, status.getUniqueID(), options.role);
  return std::move(*buffer);
}

absl::StatusOr<std::string> ReadFile(absl::string_view path, const ReadOptions& options) {
  absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = MapFile(path, options);
  if (!buffer.ok()) return buffer.status();
  return std::string((*buffer)->getBuffer());
}

absl::Status RegisterInput(absl::string_view path, absl::string_view role) {
  fs::file_status status;
  if (std::error_code ec = fs::status(Ref(path), status)) {
    return ToStatus(ec, absl::StrCat("examining ", role, " '", path, "'"));
  }
  Register(path, status.getUniqueID(), role);
  return absl::OkStatus();
}

absl::Status CheckNotAnInput(absl::string_view path, absl::string_view output_role) {
  return NotAnInput(path, output_role);
}

absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents,
                                 const WriteOptions& options) {
  return WriteFileAtomically(
      path,
      [&](llvm::raw_ostream& os) {
        os << Ref(contents);
        return absl::OkStatus();
      },
      options);
}

absl::Status WriteFileAtomically(absl::string_view path,
                                 const std::function<absl::Status(llvm::raw_ostream&)>& write,
                                 const WriteOptions& options) {
  return WriteFdAtomically(
      path, [&](llvm::raw_fd_ostream& os, int) { return write(os); }, options);
}

WritebackOStream::WritebackOStream(llvm::raw_fd_ostream& file, int fd) : file_(file), fd_(fd) {
  file_.SetUnbuffered();
  SetBufferSize(kLargeFileBufferBytes);
  const off_t at = fd >= 0 ? ::lseek(fd, 0, SEEK_CUR) : -1;
  if (at < 0) {
    fd_ = -1;  // a pipe or a terminal: nothing to write back
  } else {
    offset_ = static_cast<uint64_t>(at);
  }
}

WritebackOStream::~WritebackOStream() {
  // No I/O in a destructor (it may run while an exception unwinds the writer): what was not
  // flushed is dropped; raw_ostream wants its buffer empty at destruction.
  dropping_ = true;
  flush();
}

void WritebackOStream::write_impl(const char* ptr, size_t size) {
  if (dropping_) return;
  file_.write(ptr, size);
  written_ += size;
  if (fd_ >= 0 && written_ - started_ >= kWritebackBytes) {
    ::sync_file_range(fd_, static_cast<off64_t>(offset_ + started_),
                      static_cast<off64_t>(written_ - started_), SYNC_FILE_RANGE_WRITE);
    started_ = written_;
  }
}

absl::Status WriteLargeFileAtomically(
    absl::string_view path, const std::function<absl::Status(llvm::raw_ostream&)>& write,
    const WriteOptions& options) {
  return WriteFdAtomically(
      path,
      [&](llvm::raw_fd_ostream& os, int fd) {
        if (path == "-") {
          os.SetBufferSize(kLargeFileBufferBytes);
          return write(os);
        }
        WritebackOStream stream(os, fd);
        absl::Status status = write(stream);
        stream.flush();
        return status;
      },
      options);
}

}  // namespace warptrace
