// The check itself is the build of all_headers.cc (see BUILD): every workspace header
// reachable from the examples' and the run path's libraries, compiled with a cuda.h that
// is an #error. These tests make sure the check covers the headers that used to leak
// cuda.h into every example.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace::testing {
extern const char* const kIncludedHeaders[];
extern const int kNumIncludedHeaders;

namespace {

using ::testing::Contains;

std::vector<std::string> Included() {
  return std::vector<std::string>(kIncludedHeaders, kIncludedHeaders + kNumIncludedHeaders);
}

TEST(NoCudaHTest, TheCheckCoversTheHeadersOnTheExamplesPathToTheCudaDevice) {
  const std::vector<std::string> included = Included();
  for (const char* header : {"examples/example_main.h", "jit/run/run.h", "jit/run/device_select.h",
                             "jit/platform/device.h", "jit/cuda/cuda_device.h"}) {
    EXPECT_THAT(included, Contains(header)) << header;
  }
}

}  // namespace
}  // namespace warptrace::testing
