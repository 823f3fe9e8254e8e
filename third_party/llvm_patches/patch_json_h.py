#!/usr/bin/env python3
"""Makes LLVM 14's llvm/Support/JSON.h usable by clang-14 in C++20 mode with libstdc++ 12.

clang-14 instantiates constexpr member functions eagerly; libstdc++ 12 makes std::vector's
members constexpr in C++20, so json::Array's one-line inline members (which call
std::vector<Value> members while Value is still incomplete) fail to compile. This moves those
bodies, unchanged, to just after class Value is complete. Semantics are identical; gcc builds
use the same patched copy so every configuration sees one header.

usage: patch_json_h.py IN OUT
"""
import re
import sys

text_in = open(sys.argv[1]).read()
# Join the one two-line member (insert of an rvalue) so the line-based pass sees it whole.
text_in = re.sub(r"\n  (iterator insert\(iterator P, Value &&E\)) \{\n\s+(return [^\n]*;)\n  \}",
                 r"\n  \1 { \2 }", text_in)
src = text_in.split("\n")
out, moved = [], []
in_array = False
member = re.compile(r"^  (?P<sig>(?:friend )?[\w:&*<> ]+?[ &*](?:operator\[\]|operator==|\w+)\([^()]*\)(?: const)?) \{ (?P<body>.*) \}$")
for line in src:
    if line.startswith("class Array {"):
        in_array = True
    elif in_array and line == "};":
        in_array = False
    if in_array:
        m = member.match(line)
        if m and "template" not in line:
            sig = m.group("sig")
            out.append("  " + sig + ";")
            moved.append((sig, m.group("body")))
            continue
    out.append(line)

# Insert the moved definitions right after class Value's closing brace.
text = "\n".join(out)
anchor = text.index("class Value {")
end = text.index("\n};\n", anchor) + len("\n};\n")
defs = []
for sig, body in moved:
    if sig.startswith("friend "):
        sig = sig[len("friend "):]
        defs.append("inline " + sig + " { " + body + " }")
        continue
    m = re.match(r"(?P<ret>.*?[ &*])(?P<name>operator\[\]|\w+)\((?P<args>[^()]*)\)(?P<const> const)?$", sig)
    ret = m.group("ret").replace("iterator", "Array::iterator").replace("const_Array::iterator", "Array::const_iterator")
    defs.append("inline %sArray::%s(%s)%s { %s }" % (ret, m.group("name"), m.group("args"),
                                                   m.group("const") or "", body))
if len(moved) < 15:
    sys.exit("patch_json_h.py: expected >= 15 json::Array members to move, found %d" % len(moved))
text = text[:end] + "\n// Moved out of class Array by warptrace's patch_json_h.py (see there).\n" + \
    "\n".join(defs) + "\n" + text[end:]
open(sys.argv[2], "w").write(text)
