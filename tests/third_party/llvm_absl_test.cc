// LLVM 14 Support (streaming JSON, hashing, files) and absl (status, strings, containers,
// flags, synchronization) link together and work.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "tests/status_matchers.h"

ABSL_FLAG(int, smoke_flag, 7, "a flag, to prove absl flags link");

namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError(absl::StrCat("odd value ", x));
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

absl::Status WriteJson(llvm::raw_ostream& os, absl::Span<const int> values) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("name", "smoke");
    json.attributeArray("values", [&] {
      for (int v : values) json.value(v);
    });
  });
  return absl::OkStatus();
}

TEST(LlvmAbslTest, StatusMacrosPropagateErrors) {
  EXPECT_THAT(Quarter(8), IsOkAndHolds(2));
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("odd value 3")));
}

TEST(LlvmAbslTest, JsonStreamWritesWhatLlvmParsesBack) {
  std::string out;
  llvm::raw_string_ostream os(out);
  ASSERT_THAT(WriteJson(os, {1, 2, 3}), IsOk());
  os.flush();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(out);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object* obj = parsed->getAsObject();
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ(obj->getString("name"), llvm::Optional<llvm::StringRef>("smoke"));
  ASSERT_NE(obj->getArray("values"), nullptr);
  EXPECT_EQ(obj->getArray("values")->size(), 3u);
}

TEST(LlvmAbslTest, ContainersHashingAndFlagsWork) {
  absl::flat_hash_map<std::string, int> map;
  absl::Mutex mu;
  {
    absl::MutexLock lock(&mu);
    map[absl::StrFormat("k%d", 1)] = absl::GetFlag(FLAGS_smoke_flag);
  }
  EXPECT_EQ(map["k1"], 7);
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef("warptrace"));
  EXPECT_EQ(digest.size(), 32u);
}

}  // namespace
