"""Rules that package warptrace's C++ libraries for build systems other than Bazel.

static_archive: one `ar` archive of the PIC objects of every library of this workspace that
`deps` link (the libraries of other workspaces, e.g. Debian's absl and LLVM Support, stay
outside: the CMake package finds them itself), and OUT.linkopts: the link flags of this
workspace's libraries among them, one a line (e.g. the host runtime's
--export-dynamic-symbol=...), which a program linking the archive needs.

public_headers: every header of this workspace (sources and generated ones) that `deps`
compile against, for an install tree's include/ (tools/install.sh keeps their paths), and a
manifest of them.
"""

def _own(f):
    return f.owner != None and f.owner.workspace_name == ""

def _static_archive_impl(ctx):
    archives = []
    seen = {}
    flags = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            if linker_input.owner.workspace_name == "":
                for flag in linker_input.user_link_flags:
                    if flag not in flags:
                        flags.append(flag)
            for lib in linker_input.libraries:
                a = lib.pic_static_library or lib.static_library
                if a == None or not _own(a) or a.path in seen:
                    continue
                seen[a.path] = True
                archives.append(a)
    out = ctx.outputs.out
    script = ctx.actions.declare_file(ctx.label.name + ".mri")
    ctx.actions.write(
        script,
        "\n".join(["CREATE " + out.path] + ["ADDLIB " + a.path for a in archives] +
                  ["SAVE", "END", ""]),
    )
    ctx.actions.run_shell(
        inputs = archives + [script],
        outputs = [out],
        command = "rm -f {out} && ar -M < {script}".format(out = out.path, script = script.path),
        mnemonic = "StaticArchive",
        progress_message = "Archiving %s (%d libraries)" % (out.short_path, len(archives)),
    )
    linkopts = ctx.actions.declare_file(out.basename + ".linkopts")
    ctx.actions.write(linkopts, "".join([f + "\n" for f in flags]))
    files = [out, linkopts]
    return [DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files))]

static_archive = rule(
    implementation = _static_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "out": attr.output(mandatory = True),
    },
)

def _runfiles_path(ctx, f):
    if f.short_path.startswith("../"):
        return f.short_path[3:]
    return ctx.workspace_name + "/" + f.short_path

def _public_headers_impl(ctx):
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    own = [h for h in headers.to_list() if _own(h) and not h.short_path.startswith("third_party/")]
    lines = ["%s\t%s" % (_runfiles_path(ctx, h), h.short_path) for h in own]
    extra = []
    for target, dest in ctx.attr.extra.items():
        for f in target.files.to_list():
            extra.append(f)
            lines.append("%s\t%s" % (_runfiles_path(ctx, f), dest))
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(manifest, "\n".join(sorted(lines)) + "\n")
    files = own + extra + [manifest]
    return [DefaultInfo(files = depset(files), runfiles = ctx.runfiles(files = files))]

# `NAME.manifest` lists each header as "RUNFILES_PATH<TAB>PATH UNDER include/warptrace".
public_headers = rule(
    implementation = _public_headers_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        # More headers (a label -> the path it is installed at), e.g. the patched JSON.h.
        "extra": attr.label_keyed_string_dict(allow_files = [".h"]),
    },
)
