// TestTempPath: a path for a test's scratch file or directory, private to the running test.
//
//   const std::string prefix = TestTempPath("trace");    // .../SidecarTest.Saves/trace
//   ASSERT_THAT(SaveTrace(prefix, layout, words), IsOk());
//
// The path is "<root>/<Suite>.<Test>/<name>", where <root> is $TEST_TMPDIR under
// `bazel test` and testing::TempDir() otherwise (so a test binary or a benchmark run by hand
// works too, instead of building a string from a null getenv). "/" in parameterized names
// becomes "_". The parent directory exists when this returns; the path itself is not
// created or removed. In SetUpTestSuite/TearDownTestSuite the middle part is "<Suite>";
// outside any test (a benchmark binary) it is "no_test.<pid>".
//
// Test-only. Thread-safe.
#ifndef WARPTRACE_BASE_TESTING_TEMP_PATH_H_
#define WARPTRACE_BASE_TESTING_TEMP_PATH_H_

#include <string>

#include "absl/strings/string_view.h"

namespace warptrace {

std::string TestTempPath(absl::string_view name);

}  // namespace warptrace

#endif  // WARPTRACE_BASE_TESTING_TEMP_PATH_H_
