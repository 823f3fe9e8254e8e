#include "jit/host/compiler/host_compiler.h"
#include "jit/host/device/host_abi.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/compiler/precompiled_header.h"
#include "llvm/Support/FileSystem.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace::host {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::SimpleKernel;
using ::warptrace::testing::StatusIs;

// A g++ HostCompiler whose precompiled headers come from `store` (null: none) and are kept
// in `directory`.
std::unique_ptr<HostCompiler> Gxx(PrecompiledHeaders* store, const std::string& directory = "") {
  HostCompilerOptions options;
  options.compiler = "g++";
  options.use_precompiled_header = store != nullptr;
  options.precompiled_headers = store;
  options.precompiled_header_directory = directory;
  absl::StatusOr<std::unique_ptr<HostCompiler>> compiler = HostCompiler::Create(options);
  EXPECT_THAT(compiler, IsOk());
  return compiler.ok() ? *std::move(compiler) : nullptr;
}

// The store of the tests that use a PCH without testing how it is built, checked or dropped:
// they share its one PCH (a process's HostCompilers do too), so it is built once.
PrecompiledHeaders& SharedStore() {
  static PrecompiledHeaders* store = new PrecompiledHeaders();
  return *store;
}

CompileRequest Request(const std::string& name, const std::string& body) {
  return HostCompileRequest(SimpleKernel(name, body));
}

constexpr char kBody[] = R"(
  __shared__ int cells[64];
  cells[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x * 3, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = cells[5] + (int)sqrtf(49.0f);)";

TEST(HostCompilerTest, ACompileWithThePchYieldsTheSameSharedObjectAsWithout) {
  std::unique_ptr<HostCompiler> with = Gxx(&SharedStore());
  std::unique_ptr<HostCompiler> without = Gxx(nullptr);
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_TRUE(with->uses_precompiled_header());
  EXPECT_FALSE(without->uses_precompiled_header());
  absl::StatusOr<CompiledKernel> a = with->Compile(Request("same", kBody));
  absl::StatusOr<CompiledKernel> b = without->Compile(Request("same", kBody));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(with->stats().with_pch, 1u);
  EXPECT_EQ(without->stats().with_pch, 0u);
  EXPECT_EQ(a->log, b->log);
  EXPECT_TRUE(a->cubin == b->cubin) << "the shared objects differ";
}

// gold comes with binutils, which g++ needs: on every machine tools/setup.sh set up, kernels
// are linked by it, and gold leaves its note section in what it links.
TEST(HostCompilerTest, LinksWithGoldUnlessAskedForTheDefaultLinker) {
  HostCompilerOptions options;
  options.compiler = "g++";
  options.use_precompiled_header = false;
  absl::StatusOr<std::unique_ptr<HostCompiler>> gold = HostCompiler::Create(options);
  options.fast_linker = false;
  absl::StatusOr<std::unique_ptr<HostCompiler>> plain = HostCompiler::Create(options);
  ASSERT_THAT(gold, IsOk());
  ASSERT_THAT(plain, IsOk());
  EXPECT_THAT((*gold)->Version(), HasSubstr(" ld gold ["));
  EXPECT_THAT((*plain)->Version(), Not(HasSubstr("gold")));
  absl::StatusOr<CompiledKernel> a = (*gold)->Compile(Request("linked", kBody));
  absl::StatusOr<CompiledKernel> b = (*plain)->Compile(Request("linked", kBody));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_NE(a->cubin.find(".note.gnu.gold-version"), std::string::npos);
  EXPECT_EQ(b->cubin.find(".note.gnu.gold-version"), std::string::npos);
  EXPECT_EQ(a->log, "");
}

// Sanitize mode (docs/sanitizer.md): every load and store calls the kernel's own
// __tsan_{read,write}N callbacks (a read-modify-write both), no sanitizer runtime is linked,
// and the mode is part of the version (so of the cache key); off, nothing of it is in the
// shared object.
TEST(HostCompilerTest, SanitizeModeInstrumentsWithoutASanitizerRuntime) {
  for (const char* cxx : {"g++", "clang++"}) {
    SCOPED_TRACE(cxx);
    HostCompilerOptions options;
    options.compiler = cxx;
    options.use_precompiled_header = false;
    absl::StatusOr<std::unique_ptr<HostCompiler>> plain = HostCompiler::Create(options);
    if (!plain.ok() && std::string(cxx) == "clang++") continue;  // no clang++ here
    options.sanitize = WARPTRACE_HOST_SANITIZE_BOUNDS | WARPTRACE_HOST_SANITIZE_INIT;
    absl::StatusOr<std::unique_ptr<HostCompiler>> sanitized = HostCompiler::Create(options);
    ASSERT_THAT(plain, IsOk());
    ASSERT_THAT(sanitized, IsOk());
    EXPECT_THAT((*sanitized)->Version(),
                AllOf(HasSubstr("-DWARPTRACE_HOST_SANITIZE=5 -fsanitize=thread"),
                      HasSubstr("tsan-instrument-func-entry-exit=0")));
    EXPECT_THAT((*plain)->Version(), Not(HasSubstr("sanitize")));
    absl::StatusOr<CompiledKernel> a = (*sanitized)->Compile(Request("checked", kBody));
    absl::StatusOr<CompiledKernel> b = (*plain)->Compile(Request("checked", kBody));
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    EXPECT_NE(a->cubin.find("__tsan_write4"), std::string::npos);
    EXPECT_NE(a->cubin.find("__tsan_read4"), std::string::npos);
    EXPECT_EQ(a->cubin.find("libtsan"), std::string::npos);
    EXPECT_EQ(b->cubin.find("__tsan"), std::string::npos);
  }
}

// Older compilers get only the switches they have (an unknown one fails every compile):
// GCC 8 (RHEL 8, which the wheel's glibc 2.28 admits) has no
// tsan-instrument-func-entry-exit; clang 11 no read-before-write; clang before 14 no
// disable_sanitizer_instrumentation, so its atomics are left uninstrumented.
TEST(HostCompilerTest, SanitizeFlagsFollowTheCompilersVersion) {
  const auto has = [](const std::vector<std::string>& flags, const std::string& flag) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
  };
  const std::vector<std::string> gcc12 =
      SanitizeFlags(7, "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022\n");
  EXPECT_TRUE(has(gcc12, "-fsanitize=thread"));
  EXPECT_TRUE(has(gcc12, "-DWARPTRACE_HOST_SANITIZE=7"));
  EXPECT_TRUE(has(gcc12, "tsan-instrument-func-entry-exit=0"));
  const std::vector<std::string> gcc8 =
      SanitizeFlags(7, "g++ (GCC) 8.5.0 20210514 (Red Hat 8.5.0-18)\n");
  EXPECT_TRUE(has(gcc8, "-fsanitize=thread"));
  EXPECT_FALSE(has(gcc8, "--param"));
  EXPECT_TRUE(has(SanitizeFlags(7, "g++ (Debian 10.2.1-6) 10.2.1 20210110\n"),
                  "tsan-instrument-func-entry-exit=0"));
  EXPECT_FALSE(has(SanitizeFlags(7, "g++ (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0\n"), "--param"));
  const std::vector<std::string> clang14 = SanitizeFlags(7, "Debian clang version 14.0.6\n");
  EXPECT_TRUE(has(clang14, "-tsan-instrument-read-before-write=1"));
  EXPECT_FALSE(has(clang14, "-tsan-instrument-atomics=0"));
  EXPECT_FALSE(has(clang14, "--param"));
  const std::vector<std::string> clang11 = SanitizeFlags(7, "clang version 11.1.0\n");
  EXPECT_FALSE(has(clang11, "-tsan-instrument-read-before-write=1"));
  EXPECT_TRUE(has(clang11, "-tsan-instrument-atomics=0"));
}

TEST(HostCompilerTest, TheSecondCompileReusesThePchTheFirstBuilt) {
  PrecompiledHeaders store;
  std::unique_ptr<HostCompiler> compiler = Gxx(&store, TestTempPath("cache"));
  ASSERT_NE(compiler, nullptr);
  ASSERT_THAT(compiler->Compile(Request("first", "out[0] = 1;")), IsOk());
  ASSERT_THAT(compiler->Compile(Request("second", kBody)), IsOk());
  EXPECT_EQ(compiler->stats().compiles, 2u);
  EXPECT_EQ(compiler->stats().with_pch, 2u);
  EXPECT_EQ(compiler->stats().pch_builds, 1u);
  EXPECT_EQ(store.stats().builds, 1u);
  EXPECT_EQ(store.stats().memory_hits, 1u);

  // Another compiler with the same flags (another HostDevice of the process) reuses it too.
  std::unique_ptr<HostCompiler> other = Gxx(&store, TestTempPath("other_cache"));
  ASSERT_NE(other, nullptr);
  ASSERT_THAT(other->Compile(Request("third", kBody)), IsOk());
  EXPECT_EQ(other->stats().with_pch, 1u);
  EXPECT_EQ(other->stats().pch_builds, 0u);

  // Other flags, another PCH.
  HostCompilerOptions o2;
  o2.compiler = "g++";
  o2.extra_flags = {"-O2"};
  o2.precompiled_headers = &store;
  absl::StatusOr<std::unique_ptr<HostCompiler>> optimized = HostCompiler::Create(o2);
  ASSERT_THAT(optimized, IsOk());
  ASSERT_THAT((*optimized)->Compile(Request("fourth", kBody)), IsOk());
  EXPECT_EQ((*optimized)->stats().pch_builds, 1u);
  EXPECT_EQ(store.stats().builds, 2u);
}

TEST(HostCompilerTest, AKernelThatIncludesTheHostHeadersItselfCompilesWithThePch) {
  // The PCH's copies live in the cache, the kernel's in its own directory: include guards
  // (not #pragma once, which tells files apart by path and time) keep them from clashing.
  const std::string prelude =
      "#include \"cuda_on_cpu.h\"\n#include \"host_abi.h\"\n#include \"warptrace_primitives.cuh\"\n";
  std::unique_ptr<HostCompiler> compiler = Gxx(&SharedStore(), TestTempPath("cache"));
  ASSERT_NE(compiler, nullptr);
  ASSERT_THAT(compiler->Compile(HostCompileRequest(SimpleKernel("includes", kBody, prelude))),
              IsOk());
  EXPECT_EQ(compiler->stats().with_pch, 1u);
  EXPECT_EQ(compiler->stats().pch_fallbacks, 0u);
}

TEST(HostCompilerTest, AnUnreadablePchFallsBackToThePlainCompileAndIsDropped) {
  PrecompiledHeaders store;
  const std::string cache = TestTempPath("cache");
  std::unique_ptr<HostCompiler> compiler = Gxx(&store, cache);
  ASSERT_NE(compiler, nullptr);
  ASSERT_THAT(compiler->Compile(Request("first", "out[0] = 1;")), IsOk());
  // Damage the .gch after the store checked it (as a disk error would): g++ cannot read it.
  std::error_code ec;
  llvm::sys::fs::directory_iterator entry(absl::StrCat(cache, "/host-pch"), ec);
  ASSERT_FALSE(ec);
  const std::string gch = absl::StrCat(entry->path(), "/cuda_on_cpu.h.gch");
  absl::StatusOr<std::string> bytes = ReadFile(gch, {.register_as_input = false});
  ASSERT_THAT(bytes, IsOk());
  ASSERT_THAT(WriteFileAtomically(gch, bytes->substr(0, bytes->size() / 2)), IsOk());

  std::unique_ptr<HostCompiler> plain = Gxx(nullptr);
  ASSERT_NE(plain, nullptr);
  absl::StatusOr<CompiledKernel> fallback = compiler->Compile(Request("second", kBody));
  ASSERT_THAT(fallback, IsOk());
  EXPECT_EQ(compiler->stats().pch_fallbacks, 1u);
  absl::StatusOr<CompiledKernel> expected = plain->Compile(Request("second", kBody));
  ASSERT_THAT(expected, IsOk());
  EXPECT_TRUE(fallback->cubin == expected->cubin) << "the fallback compile differs";
  EXPECT_EQ(fallback->log, expected->log);

  // The PCH is not used again in this process, and the next process rebuilds it.
  ASSERT_THAT(compiler->Compile(Request("third", kBody)), IsOk());
  EXPECT_EQ(compiler->stats().with_pch, 1u);
  EXPECT_EQ(compiler->stats().pch_fallbacks, 1u);
  EXPECT_FALSE(llvm::sys::fs::exists(absl::StrCat(entry->path(), "/manifest")));
}

TEST(HostCompilerTest, AnErrorInTheKernelIsReportedWithoutARetry) {
  std::unique_ptr<HostCompiler> compiler = Gxx(&SharedStore());
  ASSERT_NE(compiler, nullptr);
  EXPECT_THAT(compiler->Compile(Request("broken", "out[0] = not_declared_anywhere;")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("host compiler failed on kernel broken"),
                             HasSubstr("broken.cc:3:"), HasSubstr("not_declared_anywhere"))));
  EXPECT_EQ(compiler->stats().with_pch, 1u);
  EXPECT_EQ(compiler->stats().pch_fallbacks, 0u);
}

// CUDA device code has <cmath>'s functions but not C++17's special math functions; the host
// header leaves them out too (they were a third of what it cost every compile to parse).
TEST(HostCompilerTest, CmathWorksButTheSpecialMathFunctionsCudaLacksAreNotDeclared) {
  std::unique_ptr<HostCompiler> compiler = Gxx(nullptr);
  ASSERT_NE(compiler, nullptr);
  EXPECT_THAT(compiler->Compile(Request(
                  "math", "out[0] = (int)(std::sqrt(16.0) + std::fabs(-2.0f) + fmaxf(1.f, 3.f));")),
              IsOk());
  EXPECT_THAT(compiler->Compile(Request("zeta", "out[0] = (int)std::riemann_zeta(2.0);")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("host compiler failed on kernel zeta"),
                             HasSubstr("riemann_zeta"))));
}

TEST(HostCompilerTest, AKernelHeaderNamedLikeASystemHeaderCompilesWithoutThePch) {
  // The plain compile's -I<dir> makes cuda_on_cpu.h's <math.h> this header: a PCH that read
  // the system's would change the kernel's meaning (KERNEL_MATH would be undeclared).
  KernelSource source = SimpleKernel("shadow", "out[0] = KERNEL_MATH;");
  source.headers.push_back({"math.h", "#include_next <math.h>\n#define KERNEL_MATH 7\n"});
  PrecompiledHeaders store;
  std::unique_ptr<HostCompiler> compiler = Gxx(&store);
  ASSERT_NE(compiler, nullptr);
  ASSERT_THAT(compiler->Compile(HostCompileRequest(source)), IsOk());
  EXPECT_EQ(compiler->stats().with_pch, 0u);
}

// clang++ gets its own .pch (clang finds it beside the -include'd header, as g++ finds a
// .gch). Its shared object has the same functions as without, possibly in another order, so
// the kernel is compared by what it exports and how it compiles.
TEST(HostCompilerTest, ClangCompilesWithItsOwnPch) {
  HostCompilerOptions options;
  options.compiler = "clang++";
  PrecompiledHeaders store;
  options.precompiled_headers = &store;
  const std::string cache = TestTempPath("clang_cache");
  options.precompiled_header_directory = cache;
  absl::StatusOr<std::unique_ptr<HostCompiler>> clang = HostCompiler::Create(options);
  options.use_precompiled_header = false;
  absl::StatusOr<std::unique_ptr<HostCompiler>> plain = HostCompiler::Create(options);
  if (!clang.ok() && clang.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "no clang++ on PATH: " << clang.status();
  }
  ASSERT_THAT(clang, IsOk());
  ASSERT_THAT(plain, IsOk());
  EXPECT_TRUE((*clang)->uses_precompiled_header());
  absl::StatusOr<CompiledKernel> a = (*clang)->Compile(Request("with_clang", kBody));
  absl::StatusOr<CompiledKernel> b = (*plain)->Compile(Request("with_clang", kBody));
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ((*clang)->stats().with_pch, 1u);
  EXPECT_EQ((*clang)->stats().pch_fallbacks, 0u);
  EXPECT_EQ(store.stats().builds, 1u);
  EXPECT_EQ(a->log, b->log);
  for (const char* symbol : {"warptrace_host_abi_version", "warptrace_host_entry_with_clang"}) {
    EXPECT_NE(a->cubin.find(symbol), std::string::npos) << symbol;
  }
  EXPECT_EQ(a->cubin.size(), b->cubin.size()) << "the same functions and sections";
  std::error_code ec;
  bool found_pch = false;
  for (llvm::sys::fs::recursive_directory_iterator it(cache, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (absl::EndsWith(it->path(), "cuda_on_cpu.h.pch")) found_pch = true;
  }
  EXPECT_TRUE(found_pch) << "no cuda_on_cpu.h.pch under " << cache;
}

}  // namespace
}  // namespace warptrace::host
