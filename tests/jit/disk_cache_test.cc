#include "jit/compile/disk_cache.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(CacheKeyTest, IsSha256HexAndSeparatesFields) {
  const std::string ab_c = CacheKey().Add("ab").Add("c").Digest();
  EXPECT_EQ(ab_c.size(), 64u);
  EXPECT_NE(ab_c, CacheKey().Add("a").Add("bc").Digest());
  EXPECT_EQ(ab_c, CacheKey().Add("ab").Add("c").Digest());
}

TEST(DiskCacheTest, ReturnsWhatWasPut) {
  DiskCache cache(TestTempPath("roundtrip"), "bin");
  const std::string digest = CacheKey().Add("k").Digest();
  EXPECT_EQ(cache.Get(digest), std::nullopt);
  std::string payload("payload with \0 zero", 19);
  ASSERT_THAT(cache.Put(digest, payload), IsOk());
  EXPECT_THAT(cache.Get(digest), Optional(payload));
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().corrupted, 0u);
}

TEST(DiskCacheTest, DropsAnEntryWithAFlippedPayloadByte) {
  DiskCache cache(TestTempPath("flip"), "bin");
  const std::string digest = CacheKey().Add("flip").Digest();
  ASSERT_THAT(cache.Put(digest, "0123456789"), IsOk());
  std::string bytes = ReadFile(cache.PathFor(digest));
  bytes.back() ^= 1;
  WriteFile(cache.PathFor(digest), bytes);
  EXPECT_EQ(cache.Get(digest), std::nullopt);
  EXPECT_EQ(cache.stats().corrupted, 1u);
  EXPECT_FALSE(std::ifstream(cache.PathFor(digest)).good()) << "corrupted entry not removed";
}

TEST(DiskCacheTest, DropsATruncatedEntry) {
  DiskCache cache(TestTempPath("truncated"), "bin");
  const std::string digest = CacheKey().Add("truncated").Digest();
  ASSERT_THAT(cache.Put(digest, std::string(1000, 'x')), IsOk());
  WriteFile(cache.PathFor(digest), ReadFile(cache.PathFor(digest)).substr(0, 500));
  EXPECT_EQ(cache.Get(digest), std::nullopt);
  EXPECT_EQ(cache.stats().corrupted, 1u);
}

TEST(DiskCacheTest, DropsAnEntryStoredUnderAnotherDigest) {
  DiskCache cache(TestTempPath("renamed"), "bin");
  const std::string a = CacheKey().Add("a").Digest();
  const std::string b = CacheKey().Add("b").Digest();
  ASSERT_THAT(cache.Put(a, "A"), IsOk());
  WriteFile(cache.PathFor(b), ReadFile(cache.PathFor(a)));
  EXPECT_EQ(cache.Get(b), std::nullopt);
  EXPECT_EQ(cache.stats().corrupted, 1u);
}

TEST(DiskCacheTest, ReportsAnUnwritableDirectory) {
  DiskCache cache("/proc/warptrace-cannot-exist", "bin");
  EXPECT_THAT(cache.Put(CacheKey().Add("x").Digest(), "x"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("WARPTRACE_CACHE_DIR")));
  EXPECT_EQ(cache.stats().write_failures, 1u);
}

TEST(DiskCacheTest, DefaultDirectoryPrefersWarptraceCacheDirThenXdgThenHome) {
  ASSERT_EQ(setenv("WARPTRACE_CACHE_DIR", "/a/wt", 1), 0);
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "/b/xdg", 1), 0);
  ASSERT_EQ(setenv("HOME", "/c/home", 1), 0);
  EXPECT_THAT(DiskCache::DefaultDirectory(), IsOkAndHolds("/a/wt"));
  ASSERT_EQ(unsetenv("WARPTRACE_CACHE_DIR"), 0);
  EXPECT_THAT(DiskCache::DefaultDirectory(), IsOkAndHolds("/b/xdg/warptrace"));
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);
  EXPECT_THAT(DiskCache::DefaultDirectory(), IsOkAndHolds("/c/home/.cache/warptrace"));
  ASSERT_EQ(unsetenv("HOME"), 0);
  EXPECT_THAT(DiskCache::DefaultDirectory(), StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
}

}  // namespace
}  // namespace warptrace
