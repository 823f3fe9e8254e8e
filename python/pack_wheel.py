#!/usr/bin/env python3
"""Packs the warptrace wheel (PEP 427) from what Bazel built; repair_wheel.py then makes it
manylinux with auditwheel.

    pack_wheel.py OUT.whl VERSION TAG FILE...

FILE: the package's files; each lands in warptrace/ under its base name, except the CLI
(a file named `warptrace`), which lands in warptrace/bin/ and is started by the `warptrace`
console script (warptrace/_cli.py). TAG is the wheel's compatibility tag: py3-none-<platform>,
since the package is pure Python over libwarptrace.so (ctypes), for every CPython >= 3.9 and
PyPy. Deterministic: sorted entries, fixed timestamps.
"""
import base64
import hashlib
import os
import sys
import zipfile

NAME = "warptrace"
EPOCH = (1980, 1, 1, 0, 0, 0)

METADATA = """Metadata-Version: 2.1
Name: {name}
Version: {version}
Summary: Intra-kernel GPU timeline profiler: verified Perfetto / Chrome traces, summaries and analyses of trace buffers, in-process; a drop-in dump for JAX's Mosaic GPU profiler
Requires-Python: >=3.9
License: Apache-2.0
Provides-Extra: tables
Requires-Dist: pyarrow>=15; extra == "tables"
Requires-Dist: duckdb>=1.0; extra == "tables"

Pure Python over warptrace's C library (libwarptrace.so, loaded with ctypes): one wheel for
every CPython >= 3.9 and PyPy on x86-64 Linux. numpy is optional (needed only for DLPack
arrays and read-only foreign buffers). Also installs the `warptrace` command-line tool.
The `tables` extra (pip install warptrace[tables]: pyarrow, duckdb) adds the trace tables,
Parquet datasets and `warptrace query` (docs/tables.md).
"""

WHEEL = """Wheel-Version: 1.0
Generator: warptrace pack_wheel.py
Root-Is-Purelib: false
Tag: {tag}
"""

ENTRY_POINTS = """[console_scripts]
warptrace = warptrace._cli:main
"""


def digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={h}"


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: pack_wheel.py OUT.whl VERSION TAG FILE...")
    out, version, tag, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if not tag.startswith("py3-none-"):
        sys.exit(f"pack_wheel.py: tag {tag!r} is not py3-none-<platform>")
    if os.path.basename(out) != f"{NAME}-{version}-{tag}.whl":
        sys.exit(f"pack_wheel.py: {out} is not named {NAME}-{version}-{tag}.whl (PEP 427)")
    dist_info = f"{NAME}-{version}.dist-info"
    entries = []
    for f in sorted(files, key=os.path.basename):
        base = os.path.basename(f)
        executable = base == NAME or base.endswith(".so")
        where = f"{NAME}/bin/{base}" if base == NAME else f"{NAME}/{base}"
        with open(f, "rb") as fh:
            entries.append((where, fh.read(), 0o755 if executable else 0o644))
    if not any(n.endswith("/__init__.py") for n, _, _ in entries):
        sys.exit("pack_wheel.py: no __init__.py among the files")
    entries.append((f"{dist_info}/METADATA",
                    METADATA.format(name=NAME, version=version).encode(), 0o644))
    entries.append((f"{dist_info}/WHEEL", WHEEL.format(tag=tag).encode(), 0o644))
    entries.append((f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode(), 0o644))
    entries.append((f"{dist_info}/top_level.txt", f"{NAME}\n".encode(), 0o644))
    record = "".join(f"{n},{digest(d)},{len(d)}\n" for n, d, _ in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


if __name__ == "__main__":
    main()
