"""product_sources: the workspace's own source files behind some targets, as runfiles.

The include-graph test reads them: an aspect walks `deps` from the given targets and
collects the source files in their `srcs`, `hdrs` and `textual_hdrs` (files of this
workspace only: no external repository, nothing generated). Bazel then knows the test's
inputs, so editing any product file reruns it.
"""

_SourcesInfo = provider(fields = ["files"])

def _collect_impl(target, ctx):
    direct = []
    for name in ["srcs", "hdrs", "textual_hdrs"]:
        for src in getattr(ctx.rule.attr, name, []):
            for f in src.files.to_list():
                if f.is_source and f.owner.workspace_name == "":
                    direct.append(f)
    transitive = [
        dep[_SourcesInfo].files
        for dep in getattr(ctx.rule.attr, "deps", [])
        if _SourcesInfo in dep
    ]
    return [_SourcesInfo(files = depset(direct, transitive = transitive))]

_collect = aspect(implementation = _collect_impl, attr_aspects = ["deps"])

def _product_sources_impl(ctx):
    files = depset(transitive = [d[_SourcesInfo].files for d in ctx.attr.deps])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

product_sources = rule(
    implementation = _product_sources_impl,
    attrs = {"deps": attr.label_list(aspects = [_collect])},
)
