#include "jit/compile/compile_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

constexpr char kKeyFormat[] = "warptrace-compile-cache-v1";

void AppendField(std::string& out, absl::string_view field) {
  const uint64_t size = field.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out.append(field.data(), field.size());
}

bool ReadField(absl::string_view& in, std::string& field) {
  if (in.size() < 8) return false;
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i) {
    size |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  in.remove_prefix(8);
  if (in.size() < size) return false;
  field.assign(in.data(), size);
  in.remove_prefix(size);
  return true;
}

}  // namespace

std::string EncodeCompiledKernel(const CompiledKernel& kernel) {
  std::string out;
  out.reserve(kernel.cubin.size() + kernel.ptx.size() + kernel.log.size() + 64);
  AppendField(out, kernel.arch);
  AppendField(out, kernel.log);
  AppendField(out, kernel.cubin);
  AppendField(out, kernel.ptx);
  return out;
}

std::optional<CompiledKernel> DecodeCompiledKernel(absl::string_view bytes) {
  CompiledKernel kernel;
  if (!ReadField(bytes, kernel.arch) || !ReadField(bytes, kernel.log) ||
      !ReadField(bytes, kernel.cubin) || !ReadField(bytes, kernel.ptx) || !bytes.empty()) {
    return std::nullopt;
  }
  return kernel;
}

absl::StatusOr<std::unique_ptr<CachingCompiler>> CachingCompiler::Create(
    std::unique_ptr<Compiler> compiler, CompileCacheOptions options) {
  std::optional<std::string> disk_directory;
  if (options.use_disk) {
    disk_directory = options.directory;
    if (disk_directory->empty()) {
      ASSIGN_OR_RETURN(disk_directory, DiskCache::DefaultDirectory());
    }
  }
  return std::unique_ptr<CachingCompiler>(new CachingCompiler(
      std::move(compiler), std::move(options), std::move(disk_directory)));
}

CachingCompiler::CachingCompiler(std::unique_ptr<Compiler> compiler,
                                 CompileCacheOptions options,
                                 std::optional<std::string> disk_directory)
    : compiler_(std::move(compiler)), options_(std::move(options)) {
  if (disk_directory.has_value()) disk_.emplace(*std::move(disk_directory), "cubin");
}

std::string CachingCompiler::KeyFor(const CompileRequest& request) const {
  CacheKey key;
  key.Add(kKeyFormat).Add(compiler_->Version()).Add(request.name).Add(request.source);
  key.Add(request.headers.size());
  for (const EmbeddedFile& header : request.headers) key.Add(header.name).Add(header.contents);
  const CompileOptions& options = request.options;
  key.Add(options.target.ToString()).Add(options.line_info ? 1 : 0).Add(options.cpp_standard);
  key.Add(options.extra_flags.size());
  for (const std::string& flag : options.extra_flags) key.Add(flag);
  return key.Digest();
}

std::string CachingCompiler::DiskPathFor(const CompileRequest& request) const {
  return disk_.has_value() ? disk_->PathFor(KeyFor(request)) : std::string();
}

absl::StatusOr<CompiledKernel> CachingCompiler::Compile(const CompileRequest& request) {
  const absl::Time start = absl::Now();
  const std::string key = KeyFor(request);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      ++memory_hits_;
      CompiledKernel hit = it->second;
      hit.from_cache = true;
      hit.compile_time = absl::Now() - start;
      return hit;
    }
  }
  auto remember = [&](const CompiledKernel& kernel) {
    if (options_.max_memory_entries == 0) return;
    absl::MutexLock lock(&mu_);
    if (!memory_.try_emplace(key, kernel).second) return;
    insertion_order_.push_back(key);
    while (insertion_order_.size() > options_.max_memory_entries) {
      memory_.erase(insertion_order_.front());
      insertion_order_.pop_front();
    }
  };
  if (disk_.has_value()) {
    if (std::optional<std::string> bytes = disk_->Get(key)) {
      std::optional<CompiledKernel> decoded = DecodeCompiledKernel(*bytes);
      if (decoded.has_value()) {
        remember(*decoded);
        {
          absl::MutexLock lock(&mu_);
          ++disk_hits_;
        }
        decoded->from_cache = true;
        decoded->compile_time = absl::Now() - start;
        return *std::move(decoded);
      }
      // A checksummed entry that does not decode was written by an incompatible build:
      // recompile and overwrite it.
    }
  }
  ASSIGN_OR_RETURN(CompiledKernel compiled, compiler_->Compile(request));
  {
    absl::MutexLock lock(&mu_);
    ++misses_;
  }
  remember(compiled);
  if (disk_.has_value()) {
    // A failed write is counted in stats().disk_write_failures; the compilation stands.
    disk_->Put(key, EncodeCompiledKernel(compiled)).IgnoreError();
  }
  compiled.from_cache = false;
  return compiled;
}

CompileCacheStats CachingCompiler::stats() const {
  absl::MutexLock lock(&mu_);
  CompileCacheStats stats;
  stats.memory_hits = memory_hits_;
  stats.disk_hits = disk_hits_;
  stats.misses = misses_;
  if (disk_.has_value()) {
    const DiskCacheStats disk = disk_->stats();
    stats.corrupted_entries = disk.corrupted;
    stats.disk_write_failures = disk.write_failures;
  }
  return stats;
}

}  // namespace warptrace
