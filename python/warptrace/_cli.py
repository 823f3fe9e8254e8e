"""The `warptrace` console script of the wheel: runs the CLI binary shipped in the package
(warptrace/bin/warptrace, the same program as `bazel run //profiler/cli:warptrace`)."""

import os
import sys


def main():
    if sys.argv[1:2] == ["query"]:  # `warptrace query`: DuckDB over a tables dataset
        from warptrace import _tables
        sys.exit(_tables.main(sys.argv[2:]))
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "warptrace")
    if not os.access(binary, os.X_OK):
        sys.exit(f"warptrace: error: the CLI {binary} is missing or not executable: "
                 "reinstall the wheel")
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
