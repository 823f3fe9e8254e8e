#!/usr/bin/env python3
"""Reads the include graph of warptrace's product code and checks its order.

Two rules (see ARCHITECTURE.md, "Packages"):
  1. Packages are layered: a file may include only its own package or one listed
     below it in PACKAGE_ORDER.
  2. Inside the tree, folders form no cycle: no two folders include each other,
     directly or through other folders.

Each violation is printed with the #include lines (file:line) that make it.
Exit status: 0 when the order holds, 1 when it does not, 2 on bad usage.

Usage: include_graph.py [--root DIR] [--print-graph]
"""

import argparse
import os
import re
import sys

# Bottom to top. A package sees only itself and those before it.
PACKAGE_ORDER = ["base", "format", "profiler", "jit", "capi", "python", "examples"]

SOURCE_EXTENSIONS = (".h", ".cc", ".cuh", ".cu", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def product_files(root):
    for package in PACKAGE_ORDER:
        top = os.path.join(root, package)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            # Test-only helpers are not product code.
            dirnames[:] = [d for d in dirnames if d != "testing"]
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def includes_of(root, path):
    """(line number, included path relative to root) for each quoted include of the tree."""
    result = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target = m.group(1)
            # Includes are written from the workspace root; a bare name is a sibling.
            if not os.path.exists(os.path.join(root, target)):
                sibling = os.path.normpath(os.path.join(os.path.dirname(path), target))
                if os.path.exists(os.path.join(root, sibling)):
                    target = sibling
                else:
                    continue  # generated (e.g. a .pb.h) or a system header
            result.append((number, target))
    return result


def package_of(path):
    return path.split("/", 1)[0]


def folder_of(path):
    return os.path.dirname(path)


def strongly_connected(nodes, edges):
    """Tarjan's algorithm; returns the components with more than one folder."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def check(root, print_graph=False):
    # (from folder, to folder) -> ["file:line includes target", ...]
    folder_edges = {}
    problems = []
    folders = set()
    rank = {p: i for i, p in enumerate(PACKAGE_ORDER)}
    for path in product_files(root):
        folders.add(folder_of(path))
        for number, target in includes_of(root, path):
            src_pkg, dst_pkg = package_of(path), package_of(target)
            where = "%s:%d includes %s" % (path, number, target)
            if dst_pkg not in rank:
                if dst_pkg == "tests":
                    problems.append("product code includes a test: " + where)
                continue
            if rank[dst_pkg] > rank[src_pkg]:
                problems.append("package %s includes %s, which is above it: %s"
                                % (src_pkg, dst_pkg, where))
            a, b = folder_of(path), folder_of(target)
            if a != b:
                folder_edges.setdefault((a, b), []).append(where)
                folders.add(b)
    edges = {}
    for (a, b) in folder_edges:
        edges.setdefault(a, set()).add(b)
    for comp in strongly_connected(folders, edges):
        lines = ["folders include each other (a cycle): " + " <-> ".join(comp)]
        members = set(comp)
        for (a, b), wheres in sorted(folder_edges.items()):
            if a in members and b in members:
                lines.append("  %s -> %s:" % (a, b))
                lines.extend("    " + w for w in wheres)
        problems.append("\n".join(lines))
    if print_graph:
        for (a, b), wheres in sorted(folder_edges.items()):
            print("%s -> %s (%d)" % (a, b, len(wheres)))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="the workspace root")
    parser.add_argument("--print-graph", action="store_true",
                        help="print every folder edge with its number of includes")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, "profiler")):
        print("include_graph: %s is not the warptrace workspace root (no profiler/)"
              % args.root, file=sys.stderr)
        return 2
    problems = check(args.root, args.print_graph)
    for p in problems:
        print(p)
    if problems:
        print("include_graph: %d problem(s) in the include order" % len(problems))
        return 1
    print("include_graph: the include order holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
