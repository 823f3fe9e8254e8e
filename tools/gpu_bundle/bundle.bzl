"""gpu_bundle: one tar of binaries + the shared libraries they load + run.sh, for a GPU machine.

The machine a GPU comes with has no Bazel and no network, so what runs there is assembled here:

    gpu_bundle(
        name = "warptrace_gpu_bundle",
        binaries = ["//examples:tiled_gemm", ...],   # -> bin/<name>
        files = ["run.sh", "anchors.py"],            # -> <name at the bundle's root>
    )

builds `warptrace_gpu_bundle.tar` holding one folder, `warptrace_gpu_bundle/`. The action
(assemble.sh) copies every binary, then every shared library `ldd` resolves for it (the
binary's own runfiles are inputs, so Bazel's `_solib_*` libraries of a dynamically linked
cc_test resolve too) except glibc, the CUDA driver and the CUDA toolkit (NVRTC included):
Debian's absl, protobuf, gtest and the like go to lib/, the C++ runtime (libstdc++,
libgcc_s) to lib/cxx/. A library `ldd` cannot find fails the build. MANIFEST.txt lists every
file with its size and the versions of glibc, GLIBCXX and NVRTC the binaries need.

The binaries are built in the configuration of the build: `bazel build -c opt` for the
bundle that goes to the GPU (tools/make_gpu_bundle.sh), fastbuild under `bazel test` (the
env -i test in this package).
"""

def _gpu_bundle_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".tar")
    args = ctx.actions.args()
    args.add(out)
    args.add(ctx.label.name)
    args.add(ctx.var["COMPILATION_MODE"])
    transitive = []
    for binary in ctx.attr.binaries:
        info = binary[DefaultInfo]
        executable = info.files_to_run.executable
        if executable == None:
            fail("%s is not an executable target" % binary.label)
        args.add("bin=" + executable.path)
        transitive.append(info.default_runfiles.files)
        transitive.append(info.files)
    for f in ctx.files.files:
        args.add("file=" + f.path)
    ctx.actions.run(
        executable = ctx.executable._assemble,
        arguments = [args],
        inputs = depset(ctx.files.files, transitive = transitive),
        outputs = [out],
        mnemonic = "GpuBundle",
        progress_message = "Assembling the GPU bundle %s" % out.short_path,
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

gpu_bundle = rule(
    implementation = _gpu_bundle_impl,
    attrs = {
        "binaries": attr.label_list(
            doc = "Executables, copied to bin/ under their file names.",
            allow_files = False,
        ),
        "files": attr.label_list(
            doc = "Files copied to the bundle's root under their file names (scripts keep +x).",
            allow_files = True,
        ),
        "_assemble": attr.label(
            default = ":assemble.sh",
            allow_single_file = True,
            executable = True,
            cfg = "exec",
        ),
    },
)
