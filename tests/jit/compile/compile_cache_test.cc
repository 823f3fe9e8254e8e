#include "jit/compile/compile_cache.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compile/nvrtc_compiler.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Counts compilations; the "cubin" is derived from the request so a stale hit would show.
class CountingCompiler final : public Compiler {
 public:
  explicit CountingCompiler(int* calls, std::string version = "counting 1")
      : calls_(calls), version_(std::move(version)) {}
  absl::StatusOr<CompiledKernel> Compile(const CompileRequest& request) override {
    ++*calls_;
    if (request.source == "bad") return absl::InvalidArgumentError("does not compile");
    CompiledKernel out;
    out.cubin = absl::StrCat("cubin(", request.source, ",", request.options.target.ToString(), ")");
    out.ptx = absl::StrCat("ptx(", request.source, ")");
    out.log = "a warning";
    out.arch = request.options.target.ToString();
    return out;
  }
  std::string Version() const override { return version_; }

 private:
  int* calls_;
  std::string version_;
};

CompileRequest Request(std::string source) {
  CompileRequest request;
  request.name = "k.cu";
  request.source = std::move(source);
  request.headers = {{"h.h", "// header"}};
  return request;
}

std::unique_ptr<CachingCompiler> Cache(int* calls, const std::string& dir,
                                       std::string version = "counting 1") {
  CompileCacheOptions options;
  options.directory = dir;
  absl::StatusOr<std::unique_ptr<CachingCompiler>> cache = CachingCompiler::Create(
      std::make_unique<CountingCompiler>(calls, std::move(version)), options);
  EXPECT_THAT(cache, IsOk());
  return *std::move(cache);
}

TEST(CompileCacheTest, SecondCompileIsAMemoryHit) {
  int calls = 0;
  auto cache = Cache(&calls, TestTempPath("memory"));
  absl::StatusOr<CompiledKernel> first = cache->Compile(Request("a"));
  ASSERT_THAT(first, IsOk());
  EXPECT_FALSE(first->from_cache);
  absl::StatusOr<CompiledKernel> second = cache->Compile(Request("a"));
  ASSERT_THAT(second, IsOk());
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->cubin, first->cubin);
  EXPECT_EQ(second->log, "a warning");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache->stats().memory_hits, 1u);
  EXPECT_EQ(cache->stats().disk_hits, 0u);
  EXPECT_EQ(cache->stats().misses, 1u);
}

TEST(CompileCacheTest, ANewProcessHitsTheDiskEntry) {
  int calls = 0;
  ASSERT_THAT(Cache(&calls, TestTempPath("disk"))->Compile(Request("a")), IsOk());
  auto fresh = Cache(&calls, TestTempPath("disk"));  // empty memory, same directory
  absl::StatusOr<CompiledKernel> hit = fresh->Compile(Request("a"));
  ASSERT_THAT(hit, IsOk());
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->cubin, "cubin(a,sm_90)");
  EXPECT_EQ(hit->ptx, "ptx(a)");
  EXPECT_EQ(hit->arch, "sm_90");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(fresh->stats().disk_hits, 1u);
  // Promoted to memory: the third lookup does not read the disk.
  ASSERT_THAT(fresh->Compile(Request("a")), IsOk());
  EXPECT_EQ(fresh->stats().memory_hits, 1u);
}

TEST(CompileCacheTest, AnyChangeToSourceHeadersOptionsOrCompilerVersionMisses) {
  int calls = 0;
  auto cache = Cache(&calls, TestTempPath("keys"));
  const std::string base = cache->KeyFor(Request("a"));
  CompileRequest header = Request("a");
  header.headers[0].contents = "// other";
  CompileRequest arch = Request("a");
  arch.options.target = CudaTarget(8, 0);
  CompileRequest line_info = Request("a");
  line_info.options.line_info = false;
  CompileRequest flags = Request("a");
  flags.options.extra_flags = {"-DX=1"};
  for (const CompileRequest& changed : {Request("b"), header, arch, line_info, flags}) {
    EXPECT_NE(cache->KeyFor(changed), base);
  }
  int other_calls = 0;
  EXPECT_NE(Cache(&other_calls, TestTempPath("keys"), "counting 2")->KeyFor(Request("a")), base);
}

TEST(CompileCacheTest, ACorruptedDiskEntryIsDroppedRecompiledAndCounted) {
  int calls = 0;
  const std::string dir = TestTempPath("corrupt");
  auto writer = Cache(&calls, dir);
  ASSERT_THAT(writer->Compile(Request("a")), IsOk());
  const std::string path = writer->DiskPathFor(Request("a"));
  ASSERT_THAT(path, StartsWith(dir));
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(bytes.empty());
  bytes[bytes.size() / 2] ^= 0x5a;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;

  auto reader = Cache(&calls, dir);
  absl::StatusOr<CompiledKernel> recompiled = reader->Compile(Request("a"));
  ASSERT_THAT(recompiled, IsOk());
  EXPECT_FALSE(recompiled->from_cache);
  EXPECT_EQ(recompiled->cubin, "cubin(a,sm_90)");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(reader->stats().corrupted_entries, 1u);
  EXPECT_EQ(reader->stats().misses, 1u);

  // The recompilation rewrote a good entry.
  auto third = Cache(&calls, dir);
  absl::StatusOr<CompiledKernel> hit = third->Compile(Request("a"));
  ASSERT_THAT(hit, IsOk());
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(third->stats().corrupted_entries, 0u);
}

TEST(CompileCacheTest, CompileErrorsAreReturnedAndNotCached) {
  int calls = 0;
  auto cache = Cache(&calls, TestTempPath("errors"));
  EXPECT_THAT(cache->Compile(Request("bad")), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(cache->Compile(Request("bad")), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_EQ(calls, 2);
}

TEST(CompileCacheTest, TheDefaultDirectoryComesFromWarptraceCacheDir) {
  const std::string dir = TestTempPath("env");
  ASSERT_EQ(setenv("WARPTRACE_CACHE_DIR", dir.c_str(), 1), 0);
  int calls = 0;
  absl::StatusOr<std::unique_ptr<CachingCompiler>> cache =
      CachingCompiler::Create(std::make_unique<CountingCompiler>(&calls));
  ASSERT_THAT(cache, IsOk());
  ASSERT_THAT((*cache)->Compile(Request("env")), IsOk());
  const std::string path = (*cache)->DiskPathFor(Request("env"));
  EXPECT_THAT(path, StartsWith(dir + "/"));
  EXPECT_TRUE(std::ifstream(path).good()) << path;
  ASSERT_EQ(unsetenv("WARPTRACE_CACHE_DIR"), 0);
}

TEST(CompileCacheTest, AnUnwritableDiskIsCountedNotAnError) {
  int calls = 0;
  auto cache = Cache(&calls, "/proc/warptrace-cannot-exist");
  ASSERT_THAT(cache->Compile(Request("a")), IsOk());
  EXPECT_EQ(cache->stats().disk_write_failures, 1u);
}

TEST(CompileCacheTest, EncodingRoundTripsAndRejectsGarbage) {
  CompiledKernel kernel;
  kernel.cubin = std::string("\x7f" "ELF\0\1", 6);
  kernel.ptx = "ptx";
  kernel.log = "";
  kernel.arch = "sm_90";
  std::optional<CompiledKernel> decoded = DecodeCompiledKernel(EncodeCompiledKernel(kernel));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->cubin, kernel.cubin);
  EXPECT_EQ(decoded->ptx, "ptx");
  EXPECT_EQ(decoded->arch, "sm_90");
  EXPECT_FALSE(DecodeCompiledKernel("short").has_value());
  EXPECT_FALSE(DecodeCompiledKernel(EncodeCompiledKernel(kernel) + "x").has_value());
}

TEST(CompileCacheTest, CachesRealNvrtcOutput) {
  CompileCacheOptions options;
  options.directory = TestTempPath("nvrtc");
  absl::StatusOr<std::unique_ptr<CachingCompiler>> cache =
      CachingCompiler::Create(std::make_unique<NvrtcCompiler>(), options);
  ASSERT_THAT(cache, IsOk());
  CompileRequest request;
  request.name = "k.cu";
  request.source = "extern \"C\" __global__ void k(int* x) { x[threadIdx.x] = 1; }\n";
  absl::StatusOr<CompiledKernel> cold = (*cache)->Compile(request);
  ASSERT_THAT(cold, IsOk());
  absl::StatusOr<CompiledKernel> warm = (*cache)->Compile(request);
  ASSERT_THAT(warm, IsOk());
  EXPECT_TRUE(warm->from_cache);
  EXPECT_EQ(warm->cubin, cold->cubin);
  EXPECT_EQ((*cache)->Version(), NvrtcCompiler().Version());
}

}  // namespace
}  // namespace warptrace
