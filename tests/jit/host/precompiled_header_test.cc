#include "jit/host/compiler/precompiled_header.h"

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/status_matchers.h"

namespace warptrace::host {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// A request like HostCompiler's, with g++ and its flags, for a small header that includes
// a system header and one of its own (the host backend's real headers are precompiled in
// host_compiler_test; these tests are about the store and build quickly).
PrecompiledHeaderRequest GccRequest(const std::string& directory) {
  PrecompiledHeaderRequest request;
  absl::StatusOr<std::string> gxx = FindProgram("g++");
  EXPECT_THAT(gxx, IsOk());
  request.compiler = gxx.ok() ? *gxx : "g++";
  request.compiler_version = "g++ under test";
  request.flags = {"-std=c++17", "-O1", "-shared", "-fPIC", "-pthread",
                   "-DWARPTRACE_HOST_BACKEND"};
  request.headers = {
      {"cuda_on_cpu.h",
       "#include <cstdint>\n#include \"helper.h\"\ninline int64_t Answer() { return kHelper; }\n"},
      {"helper.h", "#pragma once\nconstexpr int kHelper = 42;\n"}};
  request.directory = directory;
  return request;
}

std::string Gch(const PrecompiledHeader& pch) { return pch.include_path + ".gch"; }

std::string ReadBytes(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path, {.register_as_input = false});
  EXPECT_THAT(bytes, IsOk());
  return bytes.ok() ? *bytes : "";
}

TEST(PrecompiledHeadersTest, BuildsOnceThenServesEveryRequestFromMemory) {
  PrecompiledHeaders store;
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  absl::StatusOr<PrecompiledHeader> first = store.Get(request);
  ASSERT_THAT(first, IsOk());
  EXPECT_TRUE(first->built);
  EXPECT_TRUE(llvm::sys::fs::exists(Gch(*first)));
  EXPECT_EQ(ReadBytes(first->include_path), request.headers[0].contents);
  EXPECT_THAT(first->dependencies, ::testing::Contains(HasSubstr("/cstdint")));

  absl::StatusOr<PrecompiledHeader> second = store.Get(request);
  ASSERT_THAT(second, IsOk());
  EXPECT_FALSE(second->built);
  EXPECT_EQ(second->include_path, first->include_path);
  EXPECT_EQ(store.stats().builds, 1u);
  EXPECT_EQ(store.stats().memory_hits, 1u);
}

TEST(PrecompiledHeadersTest, WithoutADirectoryTheEntryLivesInATemporaryDirectory) {
  std::string include_path;
  {
    PrecompiledHeaders store;
    absl::StatusOr<PrecompiledHeader> pch = store.Get(GccRequest(""));
    ASSERT_THAT(pch, IsOk());
    include_path = pch->include_path;
    EXPECT_TRUE(llvm::sys::fs::exists(Gch(*pch)));
  }
  EXPECT_FALSE(llvm::sys::fs::exists(include_path));
}

TEST(PrecompiledHeadersTest, ALaterProcessReusesTheEntryInTheCacheDirectory) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaders first_process;
  ASSERT_THAT(first_process.Get(request), IsOk());
  PrecompiledHeaders second_process;
  absl::StatusOr<PrecompiledHeader> pch = second_process.Get(request);
  ASSERT_THAT(pch, IsOk());
  EXPECT_FALSE(pch->built);
  EXPECT_EQ(second_process.stats().disk_hits, 1u);
  EXPECT_EQ(second_process.stats().builds, 0u);
  EXPECT_THAT(pch->dependencies, Not(::testing::IsEmpty()));
}

// Damage to the .gch, keeping or changing its size: the next process rebuilds the entry.
void ExpectDamageIsRebuilt(const std::function<std::string(std::string)>& damage) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaders first_process;
  absl::StatusOr<PrecompiledHeader> built = first_process.Get(request);
  ASSERT_THAT(built, IsOk());
  const std::string good = ReadBytes(Gch(*built));
  const std::string damaged = damage(good);
  ASSERT_NE(damaged, good);
  ASSERT_THAT(WriteFileAtomically(Gch(*built), damaged), IsOk());

  PrecompiledHeaders second_process;
  absl::StatusOr<PrecompiledHeader> pch = second_process.Get(request);
  ASSERT_THAT(pch, IsOk());
  EXPECT_TRUE(pch->built);
  EXPECT_EQ(second_process.stats().rejected, 1u);
  EXPECT_NE(ReadBytes(Gch(*pch)), damaged);
  PrecompiledHeaders third_process;  // finds the rebuilt entry whole
  ASSERT_THAT(third_process.Get(request), IsOk());
  EXPECT_EQ(third_process.stats().disk_hits, 1u);
}

TEST(PrecompiledHeadersTest, ABitFlipInTheCachedGchIsRebuiltNotUsed) {
  ExpectDamageIsRebuilt([](std::string bytes) {
    bytes[bytes.size() / 2] ^= 0x10;
    return bytes;
  });
}

TEST(PrecompiledHeadersTest, ATruncatedCachedGchIsRebuiltNotUsed) {
  ExpectDamageIsRebuilt([](std::string bytes) { return bytes.substr(0, bytes.size() / 3); });
}

TEST(PrecompiledHeadersTest, AnEntryWhoseSystemHeaderChangedIsRebuilt) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaders first_process;
  absl::StatusOr<PrecompiledHeader> built = first_process.Get(request);
  ASSERT_THAT(built, IsOk());
  ASSERT_THAT(built->dependencies, Not(::testing::IsEmpty()));
  // The manifest records each system header's size and time; pretend one was upgraded by
  // giving the recorded entry another size.
  const std::string manifest_path =
      built->include_path.substr(0, built->include_path.rfind('/')) + "/manifest";
  const std::string manifest = ReadBytes(manifest_path);
  const size_t dep = manifest.find("\ndep ");
  ASSERT_NE(dep, std::string::npos);
  ASSERT_THAT(WriteFileAtomically(manifest_path, absl::StrCat(manifest.substr(0, dep + 5), "9",
                                                              manifest.substr(dep + 5))),
              IsOk());
  PrecompiledHeaders second_process;
  absl::StatusOr<PrecompiledHeader> pch = second_process.Get(request);
  ASSERT_THAT(pch, IsOk());
  EXPECT_TRUE(pch->built);
  EXPECT_EQ(second_process.stats().rejected, 1u);
}

TEST(PrecompiledHeadersTest, DifferentFlagsHeadersOrCompilersGetDifferentEntries) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaderRequest o2 = request;
  o2.flags[1] = "-O2";
  PrecompiledHeaderRequest defined = request;
  defined.flags.push_back("-DTILE=64");
  PrecompiledHeaderRequest edited = request;
  edited.headers[1].contents += "\n";
  PrecompiledHeaderRequest upgraded = request;
  upgraded.compiler_version = "g++ 13";
  const std::string key = PrecompiledHeaders::KeyFor(request);
  for (const PrecompiledHeaderRequest* other : {&o2, &defined, &edited, &upgraded}) {
    EXPECT_NE(PrecompiledHeaders::KeyFor(*other), key);
  }
  EXPECT_EQ(PrecompiledHeaders::KeyFor(GccRequest("/elsewhere")), key);

  PrecompiledHeaders store;
  absl::StatusOr<PrecompiledHeader> plain = store.Get(request);
  absl::StatusOr<PrecompiledHeader> optimized = store.Get(o2);
  ASSERT_THAT(plain, IsOk());
  ASSERT_THAT(optimized, IsOk());
  EXPECT_TRUE(optimized->built);
  EXPECT_NE(optimized->include_path, plain->include_path);
  EXPECT_EQ(store.stats().builds, 2u);
}

TEST(PrecompiledHeadersTest, AHeaderThatDoesNotCompileIsAnErrorWithTheCompilersOutput) {
  PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  request.headers = {{"cuda_on_cpu.h", "#error this header is broken\n"}};
  PrecompiledHeaders store;
  EXPECT_THAT(store.Get(request),
              StatusIs(absl::StatusCode::kUnavailable,
                       ::testing::AllOf(HasSubstr("precompiling cuda_on_cpu.h failed"),
                                        HasSubstr("this header is broken"))));
  EXPECT_EQ(store.stats().build_failures, 1u);
  EXPECT_EQ(store.stats().builds, 0u);
}

TEST(PrecompiledHeadersTest, ConcurrentProcessesBuildOneEntryOnce) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaders a, b;  // two stores: as two processes, they meet at the lock file
  absl::StatusOr<PrecompiledHeader> from_a, from_b;
  std::thread thread([&] { from_a = a.Get(request); });
  from_b = b.Get(request);
  thread.join();
  ASSERT_THAT(from_a, IsOk());
  ASSERT_THAT(from_b, IsOk());
  EXPECT_EQ(a.stats().builds + b.stats().builds, 1u);
  EXPECT_EQ(a.stats().disk_hits + b.stats().disk_hits, 1u);
  EXPECT_EQ(from_a->include_path, from_b->include_path);
}

TEST(PrecompiledHeadersTest, AnInvalidatedEntryIsNotServedAndRebuiltByTheNextProcess) {
  const PrecompiledHeaderRequest request = GccRequest(TestTempPath("cache"));
  PrecompiledHeaders store;
  absl::StatusOr<PrecompiledHeader> pch = store.Get(request);
  ASSERT_THAT(pch, IsOk());
  store.Invalidate(*pch);
  EXPECT_THAT(store.Get(request), StatusIs(absl::StatusCode::kFailedPrecondition,
                                           HasSubstr("failed a compile in this process")));
  PrecompiledHeaders next_process;
  absl::StatusOr<PrecompiledHeader> rebuilt = next_process.Get(request);
  ASSERT_THAT(rebuilt, IsOk());
  EXPECT_TRUE(rebuilt->built);
}

}  // namespace
}  // namespace warptrace::host
