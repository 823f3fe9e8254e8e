#!/usr/bin/env python3
"""Packs the warptrace wheel (PEP 427) from what Bazel built -- the way jaxlib is made:
Bazel builds the extension, this script only packs.

    pack_wheel.py OUT.whl VERSION TAG FILE...

FILE: the package's modules and its extension; each lands in warptrace/ under its base
name. TAG is the wheel's compatibility tag, e.g. cp311-cp311-linux_x86_64 (the extension is
built for one CPython and one platform). Deterministic: sorted entries, fixed timestamps.
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
Requires-Python: =={py}.*
Requires-Dist: numpy
License: Apache-2.0

The extension links Debian 12's shared libraries (libabsl 20220623, LLVM 14, protobuf-lite
32): install it on a machine where tools/setup.sh ran. See README.md, "Python".
"""

WHEEL = """Wheel-Version: 1.0
Generator: warptrace pack_wheel.py
Root-Is-Purelib: false
Tag: {tag}
"""


def digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={h}"


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: pack_wheel.py OUT.whl VERSION TAG FILE...")
    out, version, tag, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    py_tag = tag.split("-")[0]
    if not py_tag.startswith("cp") or len(py_tag) < 4:
        sys.exit(f"pack_wheel.py: tag {tag!r} does not start with a CPython tag (cp311-...)")
    py = f"{py_tag[2]}.{py_tag[3:]}"
    if os.path.basename(out) != f"{NAME}-{version}-{tag}.whl":
        sys.exit(f"pack_wheel.py: {out} is not named {NAME}-{version}-{tag}.whl (PEP 427)")
    dist_info = f"{NAME}-{version}.dist-info"
    entries = []
    for f in sorted(files, key=os.path.basename):
        with open(f, "rb") as fh:
            entries.append((f"{NAME}/{os.path.basename(f)}", fh.read(),
                            0o755 if f.endswith(".so") else 0o644))
    if not any(n.endswith("/__init__.py") for n, _, _ in entries):
        sys.exit("pack_wheel.py: no __init__.py among the files")
    entries.append((f"{dist_info}/METADATA",
                    METADATA.format(name=NAME, version=version, py=py).encode(), 0o644))
    entries.append((f"{dist_info}/WHEEL", WHEEL.format(tag=tag).encode(), 0o644))
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
