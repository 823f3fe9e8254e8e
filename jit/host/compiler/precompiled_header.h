// PrecompiledHeaders: precompiled headers (g++'s .gch, clang++'s .pch) of the host
// backend's force-included header, built once and reused by every host compile of the process and, through a cache
// directory, of later processes.
//
//   PrecompiledHeaderRequest request;
//   request.compiler = "/usr/bin/g++";
//   request.compiler_version = "g++ (Debian 12.2.0-14) 12.2.0";
//   request.flags = {"-std=c++17", "-O1", "-shared", "-fPIC", "-pthread", ...};
//   request.headers = {{"cuda_on_cpu.h", ...}, {"host_abi.h", ...}, ...};
//   request.directory = cache_dir;   // empty: this process only
//   absl::StatusOr<PrecompiledHeader> pch = PrecompiledHeaders::ForProcess().Get(request);
//   // ok: compile with `-include <pch->include_path> -Winvalid-pch`; otherwise compile with
//   // the plain header, exactly as without a PCH.
//
// What is precompiled. headers[0] (the header a compile force-includes first) and what it
// includes, parsed with exactly `flags`, the kernel compile's flags without the input,
// output, -include and -I<kernel dir>. GCC only accepts a PCH built with the code-generation
// flags it is used with (and may crash on one that differs: an -O1 PCH used by an -O2
// compile is an internal compiler error in GCC 12), so the flags are part of the key, and a
// compile with other flags gets another PCH. The headers are written, byte for byte, next
// to the precompiled file, so quoted includes resolve to them as in the plain compile. Only content
// that is the same for every kernel may go into `headers`: the kernel's own files are not
// part of a PCH.
//
// Key: SHA-256 over a format tag, the compiler's path and version line, every flag and
// every header's name and bytes. Entry: the directory "<directory>/host-pch/<key>/" holding
// the headers, "<headers[0]>.gch" and a manifest written last that records the .gch's size
// and xxHash64 and, for every file the build read from outside the entry (the system and
// C++ library headers, from the compiler's -MD output), its path, size and modification
// time. An entry is used only when all of that still matches (and the headers' bytes are
// the request's); a truncated or damaged .gch, a missing manifest, an upgraded system
// header: the entry is rebuilt. Builders of one entry (threads or processes) take an
// exclusive lock file in it, so one builds while the others wait and then reuse its
// result; every file is replaced by an atomic rename, so readers never see a partial one.
//
// Within a process an entry is checked once, then served from memory by key to every
// request with that key (whatever its directory). Invalidate() drops an entry a compile
// found unusable: this process stops using that key, and the manifest is removed so the
// next process rebuilds it.
//
// Both g++ and clang++ use "<header>.<suffix>" beside a header they are told to -include
// (PrecompiledHeaderRequest::suffix: ".gch" for g++, ".pch" for clang++); clang++ rejects a
// stale one with an error (the caller's fallback), g++ ignores it under -Winvalid-pch.
//
// Thread-safe.
#ifndef WARPTRACE_JIT_HOST_PRECOMPILED_HEADER_H_
#define WARPTRACE_JIT_HOST_PRECOMPILED_HEADER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/temp_dir.h"
#include "format/embedded_headers.h"

namespace warptrace::host {

struct PrecompiledHeaderRequest {
  std::string compiler;          // the path the compile runs
  std::string compiler_version;  // its `--version` line
  // Exactly the compile's flags, in order, without input, output, -include and the kernel
  // directory's -I.
  std::vector<std::string> flags;
  // headers[0] is precompiled; the others are files it includes with quotes.
  std::vector<EmbeddedFile> headers;
  // The precompiled file's suffix: the compiler finds "<headers[0]>.<suffix>" beside the
  // header: ".gch" (g++), ".pch" (clang++).
  std::string suffix = ".gch";
  // The cache directory entries are kept in ("<directory>/host-pch/"); empty: a temporary
  // directory of this process, removed when the store is destroyed.
  std::string directory;
};

struct PrecompiledHeader {
  std::string key;           // 64 hex digits
  std::string include_path;  // "<entry>/<headers[0].name>": what to -include
  // Absolute paths of the files the build read outside the entry (system headers), for a
  // caller to check that no kernel file of the same name would have shadowed one of them.
  std::vector<std::string> dependencies;
  bool built = false;  // this Get built it (rather than finding it in memory or on disk)
};

struct PrecompiledHeaderStats {
  uint64_t builds = 0;         // runs of the compiler that produced a .gch
  uint64_t memory_hits = 0;    // served from this process's memory
  uint64_t disk_hits = 0;      // an entry of the cache directory, checked and used
  uint64_t rejected = 0;       // entries on disk found damaged or stale, then rebuilt
  uint64_t build_failures = 0;
  uint64_t invalidated = 0;
};

class PrecompiledHeaders {
 public:
  PrecompiledHeaders() = default;
  PrecompiledHeaders(const PrecompiledHeaders&) = delete;
  PrecompiledHeaders& operator=(const PrecompiledHeaders&) = delete;

  // The store HostCompiler uses unless told otherwise. Never destroyed; its temporary
  // directory (entries of requests without a directory) is removed at exit.
  static PrecompiledHeaders& ForProcess();

  // The key of `request` (64 hex digits).
  static std::string KeyFor(const PrecompiledHeaderRequest& request);

  // A usable PCH for `request`, built if needed (callers wait while a build runs). Errors (the caller then compiles without a
  // PCH): InvalidArgument for a request without headers; FailedPrecondition for a key
  // invalidated in this process; Unavailable when the entry cannot be written or the
  // compiler fails on the header (the message has the command line and its output).
  absl::StatusOr<PrecompiledHeader> Get(const PrecompiledHeaderRequest& request);

  // Stops serving `pch` (a compile with it failed or the compiler rejected it) and removes
  // its manifest on disk so the next process rebuilds it. Best effort: never fails.
  void Invalidate(const PrecompiledHeader& pch);

  PrecompiledHeaderStats stats() const;

 private:
  // Forgets the entries in the temporary directory and removes it.
  void RemoveTemporaryEntries();
  // The entry directory for `key`, creating this store's temporary root if needed.
  absl::StatusOr<std::string> EntryDirectory(const PrecompiledHeaderRequest& request,
                                             const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::optional<TempDir> temp_root_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PrecompiledHeader> ready_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> entry_of_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> invalidated_ ABSL_GUARDED_BY(mu_);
  PrecompiledHeaderStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_PRECOMPILED_HEADER_H_
