"""Link options that put the system libraries into a binary instead of loading them.

A warptrace CLI run is short (tens of milliseconds on a 1e6-event trace), and loading the
~50 shared libraries Debian's absl, protobuf, zlib and libstdc++ come as took
~5 ms of each run (measured: `warptrace dump` with no input, 6.3 ms, almost all in ld.so and
the kernel's mmap/page faults). With these options the archives Debian ships beside the
shared libraries are linked in one group before the `-l` flags the libraries' own targets
add; `--as-needed` then drops every shared library nothing refers to any more, so only
glibc is loaded. The binary stays a dynamic executable.
"""

_LIB = "/usr/lib/x86_64-linux-gnu/"

_ARCHIVES = [_LIB + "libabsl_" + name + ".a" for name in [
    "bad_variant_access",
    "base",
    "city",
    "civil_time",
    "cord",
    "cord_internal",
    "cordz_functions",
    "cordz_handle",
    "cordz_info",
    "debugging_internal",
    "demangle_internal",
    "exponential_biased",
    "graphcycles_internal",
    "hash",
    "hashtablez_sampler",
    "int128",
    "low_level_hash",
    "malloc_internal",
    "raw_hash_set",
    "raw_logging_internal",
    "spinlock_wait",
    "stacktrace",
    "status",
    "statusor",
    "str_format_internal",
    "strerror",
    "strings",
    "strings_internal",
    "symbolize",
    "synchronization",
    "throw_delegate",
    "time",
    "time_zone",
]] + [_LIB + "libabsl_flags_" + name + ".a" for name in [
    "commandlineflag",
    "commandlineflag_internal",
    "config",
    "internal",
    "marshalling",
    "parse",
    "private_handle_accessor",
    "program_name",
    "reflection",
    "usage",
    "usage_internal",
]] + [
    _LIB + "libprotobuf-lite.a",
    _LIB + "libz.a",
    _LIB + "libtinfo.a",
    "/usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a",
]

STATIC_SYSTEM_LINKOPTS = (
    ["-Wl,--as-needed", "-Wl,--start-group"] + _ARCHIVES + ["-Wl,--end-group"] +
    ["-static-libgcc"]
)
