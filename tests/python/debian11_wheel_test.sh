#!/usr/bin/env bash
# The wheel where users are: in a Debian 11 root (bullseye: glibc 2.31, CPython 3.9, pip
# 20.3; tools/setup.sh makes it with debootstrap in /var/cache/warptrace-test/debian11),
# installed with that distribution's own pip -- unforced: pip must find the
# manylinux_2_28 tag compatible -- into a venv of its python3, then used there through chroot
# with an empty environment: import, a dump of a saved buffer and of one in memory, the
# `warptrace` command, and the tables (pyarrow's wheel for Python 3.9, which setup.sh
# downloads beside the root). Without the root, the pyarrow wheels or root privileges
# (chroot) it FAILS, saying how to make them: a test of what users install that did not run
# must not pass.
#   debian11_wheel_test.sh WHEEL WRITE_TEST_TRACES
set -euo pipefail
wheel=$(realpath "$1")
writer=$(realpath "$2")
cache=/var/cache/warptrace-test
root=$cache/debian11
if [[ ! -f $root/.warptrace-root-ready ]]; then
  echo "FAIL: no Debian 11 root at $root: run tools/setup.sh (as root; it makes it with"
  echo "  debootstrap from Debian's archive)"
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "FAIL: chroot into $root needs root: run the test as root"
  exit 1
fi
run=$(mktemp -d "$root/tmp/warptrace-test.XXXXXX")
trap 'rm -rf "$run"' EXIT
inner=/tmp/$(basename "$run")
cp "$wheel" "$run/"
"$writer" "$run" >/dev/null
mkdir -p "$run/wheels"
if [[ ! -f $cache/debian11-wheels/.ready ]]; then
  echo "FAIL: no pyarrow wheels for the tables in $cache/debian11-wheels: run tools/setup.sh"
  exit 1
fi
cp "$cache"/debian11-wheels/*.whl "$run/wheels/"
tables=1
in_root() { env -i PATH=/usr/bin:/bin HOME="$inner" LANG=C.UTF-8 /usr/sbin/chroot "$root" "$@"; }

echo "== $(in_root cat /etc/debian_version): $(in_root /usr/bin/ldd --version | head -1)"
in_root /usr/bin/python3 -m venv "$inner/venv"
echo "== $(in_root "$inner/venv/bin/pip" --version)"
packages=("$inner/$(basename "$wheel")")
((tables)) && packages+=(pyarrow)
in_root "$inner/venv/bin/pip" install --no-index --find-links "$inner/wheels" "${packages[@]}" \
  2>&1 | grep -v "^  " | tee "$run/pip.log"
grep -q "Successfully installed.*warptrace-" "$run/pip.log" || {
  echo "FAIL: Debian 11's pip did not install $(basename "$wheel")"; exit 1; }

in_root "$inner/venv/bin/python" - "$inner" "$tables" <<'PY'
import os, subprocess, sys
import warptrace
work, tables = sys.argv[1], sys.argv[2] == "1"
where = os.path.dirname(warptrace.__file__)
assert where.startswith(work), where
print(f"== {sys.implementation.name} {sys.version.split()[0]} on glibc "
      f"{os.confstr('CS_GNU_LIBC_VERSION').split()[1]}: warptrace {warptrace.__version__} "
      f"from {where}")
r = warptrace.dump(os.path.join(work, "clean"), output=os.path.join(work, "t.pftrace"),
                   summary=True)
assert r.kept_events == 2000 and r.verdict_counts["complete"] == 10, r
print("dump:", r.kept_events, "events,", r.verdict_counts, "->", r.paths)
print(r.summary_text.splitlines()[0])
with open(os.path.join(work, "clean.bin"), "rb") as f:
    raw = f.read()
layout = warptrace.Layout.load(os.path.join(work, "clean.json"))
assert warptrace.dump(raw, layout, os.path.join(work, "mem.json")).kept_events == 2000
# `warptrace` as the venv puts it on PATH.
path = os.path.join(sys.prefix, "bin") + os.pathsep + os.environ["PATH"]
cli = subprocess.run(["warptrace", "dump", "--input=" + os.path.join(work, "clean"),
                      "--output=" + os.path.join(work, "cli.json"), "--summary"],
                     capture_output=True, text=True, env=dict(os.environ, PATH=path))
assert cli.returncode == 0, cli.stderr
print("warptrace dump --summary:", cli.stdout.splitlines()[0])
warptrace.dump(os.path.join(work, "clean"), output=os.path.join(work, "pkg.json"))
with open(os.path.join(work, "cli.json"), "rb") as a, open(os.path.join(work, "pkg.json"), "rb") as b:
    assert a.read() == b.read(), "the CLI and the package wrote different traces"
if tables:
    import pyarrow
    t = warptrace.tables(os.path.join(work, "clean"))
    assert t and all(isinstance(v, pyarrow.Table) for v in t.values()), t
    rows = {name: table.num_rows for name, table in t.items()}
    assert sum(rows.values()) > 0, rows
    print(f"tables (pyarrow {pyarrow.__version__}):", rows)
print("PASS: Debian 11")
PY
