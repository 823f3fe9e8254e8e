// Reading a trace back from disk: PREFIX.bin and PREFIX.json (the sidecar schema,
// format/sidecar.h, which this header includes: WriteLayoutJson, ParseLayoutJson, SaveTrace),
// or a foreign producer's files through an importer.
//
// Other producers: a sidecar whose "format" is not "warptrace" (e.g. "mosaic-gpu", written
// by JAX's Mosaic GPU profiler) is handed to the importer registered for that format in
// LoadOptions::importers, which turns it into a warptrace TraceLayout and buffer:
//
//   LoadOptions options;
//   options.importers["mosaic-gpu"] = &ImportMosaicGpuTrace;  // profiler/imports/mosaic_import.h
//   ASSIGN_OR_RETURN(LoadedTrace trace, LoadTrace("/tmp/gemm", options));
//
// Thread-safety: all functions are reentrant; concurrent SaveTrace calls on one prefix leave
// one of the complete versions (writes are atomic renames).
// Thread-safety: all functions are reentrant.
#ifndef WARPTRACE_PROFILER_IMPORTS_SIDECAR_H_
#define WARPTRACE_PROFILER_IMPORTS_SIDECAR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "format/sidecar.h"
#include "profiler/imports/trace_words.h"

namespace warptrace {

// A trace read back from disk: the layout and the buffer's words (host order). LoadTrace of a
// warptrace buffer reads the words in place from the mapped file (trace_words.h).
struct LoadedTrace {
  TraceLayout layout;
  TraceWords words;
};

// Turns a foreign sidecar into a warptrace trace. `prefix` is LoadTrace's argument (the
// importer reads PREFIX.bin itself, in its own format); `sidecar_json` is the text of
// PREFIX.json, already known to be a JSON object whose "format" selected this importer.
// Errors are returned unchanged by LoadTrace.
using SidecarImporter = std::function<absl::StatusOr<LoadedTrace>(
    absl::string_view prefix, absl::string_view sidecar_json)>;

struct LoadOptions {
  // Importers by sidecar "format" value. "warptrace" is built in and cannot be replaced.
  absl::flat_hash_map<std::string, SidecarImporter> importers;
};

// The prefix a user's path names: `path` itself when PATH.json exists, else `path` without a
// trailing ".bin" or ".json" when that prefix's .json exists (so "x", "x.bin" and "x.json"
// all name the trace x), else `path` unchanged (loading it then names the missing
// PATH.json). Only looks at the file system.
std::string ResolveTracePrefix(absl::string_view path);

// Reads PREFIX.json and PREFIX.bin, where PREFIX is ResolveTracePrefix(prefix): the prefix,
// PREFIX.bin or PREFIX.json. A "warptrace" sidecar is parsed here; any other format goes to
// options.importers (with the resolved prefix).
// NotFound (or the file system's code): a file cannot be read, naming it. Both files are
//   registered as inputs (base/file.h): no output of this process may replace them.
// InvalidArgument: the sidecar is rejected (see ParseLayoutJson), or its format has no
//   importer registered (naming the format and the registered ones).
// DataLoss: PREFIX.bin is not BufferBytes(layout) bytes long; the message gives expected and
//   actual sizes, what the actual size would mean (records of this layout, or the capacity
//   that would fit), and what to check.
absl::StatusOr<LoadedTrace> LoadTrace(absl::string_view prefix,
                                      const LoadOptions& options = {});

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_IMPORTS_SIDECAR_H_
