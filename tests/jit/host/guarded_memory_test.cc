// Guarded regions (jit/host/runtime/guarded_memory.h): where the data sits against its guard pages
// and how a fault address is described.
#include "jit/host/runtime/guarded_memory.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace::host {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

uintptr_t Address(const char* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(GuardedMemoryTest, DataEndsAgainstTheUpperGuardAndIsAligned) {
  absl::StatusOr<GuardedRegion> region = GuardedRegion::Map(1000, 256, "device buffer");
  ASSERT_THAT(region.status(), IsOk());
  EXPECT_EQ(region->size(), 1000u);
  EXPECT_EQ(Address(region->data()) % 256, 0u);
  // 1000 bytes padded to 1024 end at a page boundary.
  EXPECT_EQ((Address(region->data()) + 1024) % GuardPageSize(), 0u);
  std::memset(region->data(), 0xab, 1024);  // every byte up to the guard is writable
}

TEST(GuardedMemoryTest, AFaultInAGuardPageIsDescribedByRegionAndDistance) {
  absl::StatusOr<GuardedRegion> region = GuardedRegion::Map(4096, 256, "device buffer");
  ASSERT_THAT(region.status(), IsOk());
  const uintptr_t end = Address(region->data()) + 4096;
  const std::string where = absl::StrFormat("(4096 bytes at %p)", region->data());
  EXPECT_THAT(DescribeGuardFault(end + 16),
              Optional(HasSubstr("16 bytes past the end of the device buffer " + where)));
  EXPECT_THAT(DescribeGuardFault(Address(region->data()) - 4),
              Optional(HasSubstr("4 bytes before the start of the device buffer " + where)));
  EXPECT_EQ(DescribeGuardFault(Address(region->data()) + 8), std::nullopt);  // inside
}

TEST(GuardedMemoryTest, AnUnmappedRegionDescribesNothing) {
  uintptr_t end = 0;
  {
    absl::StatusOr<GuardedRegion> region = GuardedRegion::Map(256, 16, "dynamic shared memory");
    ASSERT_THAT(region.status(), IsOk());
    end = Address(region->data()) + 256;
    EXPECT_NE(DescribeGuardFault(end), std::nullopt);
  }
  EXPECT_EQ(DescribeGuardFault(end), std::nullopt);
}

TEST(GuardedMemoryTest, AnEmptyRegionPointsAtItsGuard) {
  absl::StatusOr<GuardedRegion> region = GuardedRegion::Map(0, 16, "dynamic shared memory");
  ASSERT_THAT(region.status(), IsOk());
  EXPECT_THAT(DescribeGuardFault(Address(region->data())),
              Optional(HasSubstr("0 bytes past the end of the dynamic shared memory (0 bytes")));
}

TEST(GuardedMemoryTest, ABadAlignmentIsInvalid) {
  EXPECT_THAT(GuardedRegion::Map(64, 24, "device buffer").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alignment 24")));
}

}  // namespace
}  // namespace warptrace::host
