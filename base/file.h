// Reading files, and writing them atomically without ever replacing an input.
//
//   ASSIGN_OR_RETURN(std::string sidecar, ReadFile(path, {.role = "trace sidecar"}));
//   RETURN_IF_ERROR(WriteFileAtomically(out, json, {.role = "verdict report"}));
//   RETURN_IF_ERROR(WriteFileAtomically(out, [&](llvm::raw_ostream& os) -> absl::Status {
//     return WriteChromeTrace(timeline, options, os);          // streamed, never in memory
//   }, {.role = "Chrome trace"}));
//
// Inputs. Every file ReadFile/MapFile opens (unless ReadOptions::register_as_input is false)
// is remembered, process-wide, as an input: its real path and its file identity (device and
// inode, so a hard link or a symlink to it is recognized too). RegisterInput adds a file the
// process reads some other way. WriteFileAtomically refuses to write over an input
// (FailedPrecondition, naming both roles), so `warptrace dump --input=P --output=P.json`
// fails instead of destroying its own sidecar; CheckNotAnInput lets a command refuse before
// it writes anything. Files a process reads and later rewrites on purpose (cache entries,
// its own temporaries) are read with register_as_input = false.
//
// Outputs. What an output path names decides how it is written:
//   * a regular file, or nothing yet: WriteFileAtomically writes a temporary file in the
//     target's directory and renames it over the target, so readers see the old or the new
//     contents, never a part. The temporary has no name while it is written (O_TMPFILE,
//     linked under "NAME.tmp-PID-XXXXXX" just before the rename) where the file system
//     supports it (ext4, xfs, btrfs, tmpfs), so a process killed meanwhile (SIGKILL, a
//     crash) leaves nothing behind; elsewhere it is created as "NAME.tmp-PID-XXXXXX", and each
//     write of NAME first removes such temporaries whose process no longer exists. (Setting
//     WARPTRACE_NO_O_TMPFILE=1 forces named temporaries: for tests.) Temporaries of older
//     warptrace versions ("NAME.tmp-XXXXXX", no pid) are left alone.
//   * a symlink: followed; the file it names is replaced as above and the link stays.
//   * anything else — a character device (/dev/null), a FIFO, /dev/stdout: opened and
//     written in place, as cp or tee would, never replaced by a regular file. Not atomic: a
//     failed write leaves what was written. A directory is an error (EISDIR).
// Written files are never executable: rw-rw-rw- less the umask (llvm::writeToOutput, made
// for objcopy, leaves rwxr-xr-x). The path "-" means standard output (not atomic, of
// course, and never an input).
//
// Error codes (messages name the role and the path): the file system's, mapped as in
// base/status_adapters.h (NotFound, PermissionDenied, ResourceExhausted...);
// FailedPrecondition for an output that would replace an input; a writer callback's own
// Status unchanged (the target is then left as it was).
//
// Thread-safety: all functions are thread-safe; the input registry is guarded by a mutex.
#ifndef WARPTRACE_BASE_FILE_H_
#define WARPTRACE_BASE_FILE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {

struct ReadOptions {
  // What the file is to the program, for messages: "trace sidecar", "Mosaic GPU buffer".
  absl::string_view role = "input file";
  // Remember the file as an input that no output may replace (see above).
  bool register_as_input = true;
};

struct WriteOptions {
  // What the file is to the program, for messages: "Chrome trace", "verdict report".
  absl::string_view role = "output file";
};

// The whole file. NotFound, PermissionDenied, FailedPrecondition (a directory)...
absl::StatusOr<std::string> ReadFile(absl::string_view path, const ReadOptions& options = {});

// The whole file without copying it into the heap where the system allows (large files are
// memory-mapped). Same errors as ReadFile. The buffer is not null-terminated.
absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> MapFile(absl::string_view path,
                                                            const ReadOptions& options = {});

// Remembers an existing file as an input with `role`. NotFound (or the file system's code)
// when it cannot be examined.
absl::Status RegisterInput(absl::string_view path, absl::string_view role);

// FailedPrecondition when `path` names a file registered as an input, e.g.
//   "refusing to write the Chrome trace to 'p.json': it is the trace sidecar this program
//    read ('p.json'); an output never replaces an input: choose another path".
// OK for "-", for a path that does not exist, and for any other file.
absl::Status CheckNotAnInput(absl::string_view path, absl::string_view output_role);

// Writes `contents` to `path` atomically (see above).
absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents,
                                 const WriteOptions& options = {});

// Streams the file's contents through `write` into a temporary file, then renames it into
// place if `write` returned OK and every byte reached the disk; otherwise removes it and
// returns `write`'s Status or the I/O error. `write` may change the stream's buffer size.
absl::Status WriteFileAtomically(absl::string_view path,
                                 const std::function<absl::Status(llvm::raw_ostream&)>& write,
                                 const WriteOptions& options = {});

// The stream buffer WriteLargeFileAtomically gives `write`: big enough that write(2) calls
// do not show in a profile of a multi-GB trace.
inline constexpr size_t kLargeFileBufferBytes = size_t{1} << 20;

// The stream of a large output on descriptor `fd` (written through `file`, which must stay
// alive and is made unbuffered): a kLargeFileBufferBytes buffer, and every kWritebackBytes
// it starts the kernel's writeback of what it wrote (sync_file_range, without waiting), from
// the thread that writes. Replacing a file by rename, or closing one that was truncated,
// makes ext4 flush the whole file's dirty pages right then (auto_da_alloc): 15 ms for a
// 44 MB trace, measured, on the dump's critical path. Advisory: a descriptor that cannot
// (a pipe) or a file system that does not write back is written as usual; write errors are
// `file`'s (has_error). Flush it before checking `file`: the destructor writes nothing (what
// was not flushed is dropped, as when an exception unwinds the writer).
class WritebackOStream : public llvm::raw_ostream {
 public:
  static constexpr uint64_t kWritebackBytes = uint64_t{8} << 20;

  WritebackOStream(llvm::raw_fd_ostream& file, int fd);
  ~WritebackOStream() override;

 private:
  void write_impl(const char* ptr, size_t size) override;
  uint64_t current_pos() const override { return written_; }

  llvm::raw_fd_ostream& file_;
  int fd_;               // -1: no writeback
  uint64_t offset_ = 0;  // the descriptor's position when the stream began
  uint64_t written_ = 0;
  uint64_t started_ = 0;  // writeback started for [offset_, offset_ + started_)
  bool dropping_ = false;  // destroyed: what is left in the buffer goes nowhere
};

// WriteFileAtomically for outputs of many megabytes streamed in small pieces (traces): the
// stream `write` gets is a WritebackOStream (stdout: a kLargeFileBufferBytes buffer). Same
// contract and errors.
//
//   RETURN_IF_ERROR(WriteLargeFileAtomically(path, [&](llvm::raw_ostream& os) {
//     ChromeTraceSink chrome(options, os);
//     TraceSink* sinks[] = {&chrome};
//     return DumpTrace(layout, words, dump_options, sinks, result);
//   }, {.role = "Chrome trace"}));
absl::Status WriteLargeFileAtomically(absl::string_view path,
                                      const std::function<absl::Status(llvm::raw_ostream&)>& write,
                                      const WriteOptions& options = {});

}  // namespace warptrace

#endif  // WARPTRACE_BASE_FILE_H_
