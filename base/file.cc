#include "base/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
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

// WriteFileAtomically, the writer also given the descriptor ("-": stdout's).
absl::Status WriteFdAtomically(absl::string_view path, const FdWriter& write,
                               const WriteOptions& options) {
  const std::string context = absl::StrCat("writing ", options.role, " '", path, "'");
  if (path == "-") return WriteStream(llvm::outs(), STDOUT_FILENO, write, context);
  if (absl::Status s = NotAnInput(path, options.role); !s.ok()) return s;
  // rw-rw-rw- less the umask (open(2) applies it): an output is data, never a program.
  llvm::Expected<fs::TempFile> temp =
      fs::TempFile::create(llvm::Twine(Ref(path)) + ".tmp-%%%%%%", fs::all_read | fs::all_write);
  if (!temp) return ToStatus(temp.takeError(), context);
  // An exception (std::bad_alloc) unwinding the writer removes the temporary file too.
  struct DiscardOnUnwind {
    fs::TempFile* temp;
    ~DiscardOnUnwind() {
      if (temp != nullptr) llvm::consumeError(temp->discard());
    }
  } guard{&*temp};
  absl::Status status;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    // Its destructor aborts on an uncleared error: an exception leaves it cleared.
    struct ClearOnUnwind {
      llvm::raw_fd_ostream& os;
      ~ClearOnUnwind() { os.clear_error(); }
    } clear{os};
    status = WriteStream(os, temp->FD, write, context);
  }
  guard.temp = nullptr;
  if (!status.ok()) {
    llvm::consumeError(temp->discard());
    return status;
  }
  // Checked again just before the rename: the writer may have run for a long time.
  if (absl::Status s = NotAnInput(path, options.role); !s.ok()) {
    llvm::consumeError(temp->discard());
    return s;
  }
  return ToStatus(temp->keep(Ref(path)), context);
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
