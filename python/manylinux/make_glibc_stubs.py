#!/usr/bin/env python3
"""Link-time stand-ins for glibc 2.28's shared libraries, made from this machine's glibc.

usage: make_glibc_stubs.py OUT_DIR [MAX_VERSION]      (default MAX_VERSION: 2.28)

For each of libc.so.6, libm.so.6 and ld-linux-x86-64.so.2 it writes a shared object with the
same soname that defines every symbol the real one exports in a version <= MAX_VERSION, at
the newest such version (what that glibc's default was: memcpy@@GLIBC_2.14, log2@@GLIBC_2.2.5,
pthread_create@@GLIBC_2.2.5), and nothing newer: a library or program linked against these
binds only to symbols glibc MAX_VERSION has, and `-z defs` names any it lacks. Symbols that
only newer glibc has (stat@2.33, arc4random@2.36, ...) are left out, so that the link fails
until glibc_compat.c provides them. Functions are `ret`, objects zero bytes of the real size
(copy relocations take it). libpthread.so.0, libdl.so.2 and librt.so.1 are empty stand-ins
(their soname and GLIBC_2.2.5): linked --no-as-needed they make the output load them, which
glibc < 2.34 needs for its pthread, dl and rt functions (2.34 and later keep them as stubs).
Also libc.so and libm.so linker scripts (-L OUT_DIR -lc), with the machine's libc_nonshared.a.
Only the output of the link is used: these stand-ins are never loaded.
"""
import os
import re
import subprocess
import sys

LIBDIR = "/lib/x86_64-linux-gnu"
REAL = {
    "libc.so.6": f"{LIBDIR}/libc.so.6",
    "libm.so.6": f"{LIBDIR}/libm.so.6",
    "ld-linux-x86-64.so.2": "/lib64/ld-linux-x86-64.so.2",
}
EMPTY = ["libpthread.so.0", "libdl.so.2", "librt.so.1"]
NONSHARED = "/usr/lib/x86_64-linux-gnu/libc_nonshared.a"
SYM = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\d+)\s+"
                 r"([^@\s]+)@@?(GLIBC_[0-9.]+)")


def version_key(v):
    return tuple(int(x) for x in v[len("GLIBC_"):].split("."))


def exported(path):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        m = SYM.match(line)
        if not m:
            continue
        size, kind, bind, _, name, version = m.groups()
        syms.setdefault(name, []).append((version, kind, bind, int(size, 0)))
    return syms


def build(out_dir, soname, syms, max_version):
    chosen = {}
    for name, versions in syms.items():
        old = [v for v in versions if version_key(v[0]) <= max_version]
        if old:
            chosen[name] = max(old, key=lambda v: version_key(v[0]))
    by_version = {}
    asm = ["\t.text"]
    data = ["\t.data"]
    for name in sorted(chosen):
        version, kind, bind, size = chosen[name]
        by_version.setdefault(version, []).append(name)
        directive = ".weak" if bind == "WEAK" else ".globl"
        if kind in ("OBJECT", "TLS"):
            if kind == "TLS":
                continue  # only GLIBC_PRIVATE ones (errno) are TLS; nothing links them
            data += [f"\t{directive} {name}", f"\t.type {name}, @object",
                     f"\t.size {name}, {max(size, 1)}", "\t.balign 8", f"{name}:",
                     f"\t.zero {max(size, 1)}"]
        else:
            asm += [f"\t{directive} {name}", f"\t.type {name}, @function", f"{name}:", "\tret"]
    versions = sorted(by_version, key=version_key)
    script, previous = [], None
    for v in versions:
        body = "".join(f"  {n};\n" for n in by_version[v])
        script.append(f"{v} {{\n global:\n{body}}}{' ' + previous if previous else ''};\n")
        previous = v
    base = os.path.join(out_dir, soname)
    with open(base + ".s", "w") as f:
        f.write("\n".join(asm + data) + "\n\t.section .note.GNU-stack,\"\",@progbits\n")
    with open(base + ".map", "w") as f:
        f.write("".join(script) if script else "GLIBC_2.2.5 { };\n")
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", base, base + ".s",
                    f"-Wl,--version-script={base}.map", f"-Wl,-soname,{soname}",
                    "-Wl,--hash-style=both"], check=True)
    os.remove(base + ".s")
    os.remove(base + ".map")
    return len(chosen)


def main():
    out_dir = sys.argv[1]
    max_version = version_key("GLIBC_" + (sys.argv[2] if len(sys.argv) > 2 else "2.28"))
    os.makedirs(out_dir, exist_ok=True)
    for soname, path in REAL.items():
        build(out_dir, soname, exported(path), max_version)
    for soname in EMPTY:
        build(out_dir, soname, {}, max_version)
    with open(os.path.join(out_dir, "libc.so"), "w") as f:
        f.write(f"GROUP ( libc.so.6 {NONSHARED} AS_NEEDED ( ld-linux-x86-64.so.2 ) )\n")
    with open(os.path.join(out_dir, "libm.so"), "w") as f:
        f.write("GROUP ( libm.so.6 )\n")


if __name__ == "__main__":
    main()
