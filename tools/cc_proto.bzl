"""cc_proto: C++ messages from one of our own .proto files, with the system's protoc.

Bazel 4.2.3 runs offline here, so there is no rules_proto: a genrule runs Debian's protoc
(/usr/bin/protoc, package protobuf-compiler; tools/setup.sh installs it) and a cc_library
compiles what it wrote against Debian's libprotobuf (//third_party:protobuf.BUILD).

    cc_proto(name = "perfetto_trace_cc_proto", src = "perfetto_trace.proto")

makes the target `perfetto_trace_cc_proto`, whose header is "<package>/perfetto_trace.pb.h".
The .proto must say `option optimize_for = LITE_RUNTIME;` (the library links the lite
runtime only) and may import nothing.
"""

def cc_proto(name, src, visibility = None):
    base = src[:-len(".proto")]
    native.genrule(
        name = name + "_gen",
        srcs = [src],
        outs = [base + ".pb.h", base + ".pb.cc"],
        # --proto_path is the workspace root, so the generated code includes
        # "<package>/<base>.pb.h", which is where Bazel puts it.
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) $(location %s)" % src,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        # protoc 3.21's output trips -Wextra (unused parameters) on some messages; these
        # apply to the generated file only.
        copts = ["-Wno-unused-parameter"],
        deps = ["@protobuf//:protobuf_lite"],
        visibility = visibility,
    )
