// CachingCompiler: a Compiler decorator that remembers compilations in memory and on disk.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CachingCompiler> compiler,
//                    CachingCompiler::Create(std::make_unique<NvrtcCompiler>()));
//   ASSIGN_OR_RETURN(CompiledKernel k, compiler->Compile(request));  // k.from_cache
//
// The key is a SHA-256 over the request's name, source, headers (names and contents, in
// order), every option, and the wrapped compiler's Version(): change any of them and the
// kernel is recompiled. Lookup order: memory (this object), then disk (a DiskCache in
// CompileCacheOptions::directory, by default DiskCache::DefaultDirectory(): env
// WARPTRACE_CACHE_DIR, else $XDG_CACHE_HOME/warptrace, else ~/.cache/warptrace), then the
// wrapped compiler, whose result is stored in both. Disk entries are written atomically and
// checksummed; a corrupted one is dropped, recompiled and counted in stats().
// Compile errors are not cached.
//
// Thread-safe: concurrent Compile calls are allowed (two concurrent misses of the same key
// both compile; the results are identical).
#ifndef WARPTRACE_JIT_COMPILE_CACHE_H_
#define WARPTRACE_JIT_COMPILE_CACHE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "jit/compile/compiler.h"
#include "jit/compile/disk_cache.h"

namespace warptrace {

struct CompileCacheOptions {
  // Disk cache directory; empty means DiskCache::DefaultDirectory().
  std::string directory;
  bool use_disk = true;
  // Most compilations kept in memory; the oldest is evicted first. 0 disables the memory
  // level.
  size_t max_memory_entries = 256;
};

struct CompileCacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t misses = 0;             // compilations by the wrapped compiler
  uint64_t corrupted_entries = 0;  // disk entries found damaged, dropped and recompiled
  uint64_t disk_write_failures = 0;
};

class CachingCompiler final : public Compiler {
 public:
  // Errors: FailedPrecondition when use_disk, no directory is given and none can be derived
  // from the environment.
  static absl::StatusOr<std::unique_ptr<CachingCompiler>> Create(
      std::unique_ptr<Compiler> compiler, CompileCacheOptions options = {});

  // As the wrapped compiler's Compile; a hit has from_cache set and compile_time the lookup
  // time. Errors: exactly the wrapped compiler's (a failing disk is never an error).
  absl::StatusOr<CompiledKernel> Compile(const CompileRequest& request) override;
  std::string Version() const override { return compiler_->Version(); }

  // The cache key of `request` for this compiler (64 hex digits).
  std::string KeyFor(const CompileRequest& request) const;
  // Where the disk entry of `request` lives (empty without a disk level).
  std::string DiskPathFor(const CompileRequest& request) const;
  CompileCacheStats stats() const;

 private:
  CachingCompiler(std::unique_ptr<Compiler> compiler, CompileCacheOptions options,
                  std::optional<std::string> disk_directory);

  std::unique_ptr<Compiler> compiler_;
  CompileCacheOptions options_;
  std::optional<DiskCache> disk_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, CompiledKernel> memory_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> insertion_order_ ABSL_GUARDED_BY(mu_);
  uint64_t memory_hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t disk_hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

// The disk encoding of a CompiledKernel (arch, log, cubin, PTX; no timing), and back.
// DecodeCompiledKernel returns nullopt for bytes that are not such an encoding.
std::string EncodeCompiledKernel(const CompiledKernel& kernel);
std::optional<CompiledKernel> DecodeCompiledKernel(absl::string_view bytes);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_CACHE_H_
