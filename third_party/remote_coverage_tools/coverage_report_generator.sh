#!/bin/sh
echo "warptrace: 'bazel coverage' is not supported offline (remote_coverage_tools is a local stand-in)." >&2
echo "Run the tests with 'bazel test //...' or the sanitizers with --config=asan / --config=ubsan." >&2
exit 1
