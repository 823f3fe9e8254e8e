/* warptrace's C API: the dump of a recorded trace buffer (warptrace's own, or JAX Mosaic GPU's)
 * for any language and build system — the shape of llvm-c and libclang. Plain C, opaque
 * handles, results as JSON text; no C++ type or exception crosses it. libwarptrace.so exports
 * the warptrace_* functions below and nothing else.
 *
 *   warptrace_layout* layout = NULL;
 *   warptrace_error* error = NULL;
 *   if (warptrace_layout_load("/tmp/gemm.json", &layout, &error) != WARPTRACE_OK) { ... }
 *   char* result = NULL;
 *   int code = warptrace_dump(layout, words, bytes,
 *                             "{\"output\": \"/tmp/gemm.pftrace\", \"summary\": true}",
 *                             &result, &error);
 *   if (code != WARPTRACE_OK) {
 *     fprintf(stderr, "%s\n", warptrace_error_message(error));  // which unit, which event
 *     warptrace_error_free(error);
 *   }
 *   ... parse `result` (JSON: verdicts, findings, summary, diagnosis, analysis) ...
 *   warptrace_free(result);
 *   warptrace_layout_free(layout);
 *
 * Errors. Every fallible function returns a warptrace_code (WARPTRACE_OK = 0; the others are
 * absl's status codes, numbered as absl::StatusCode) and, when `error` is not NULL, sets
 * *error to a handle holding the code and a message a user can act on (free it with
 * warptrace_error_free). A dump that decoded the buffer but failed (verification, an output
 * that could not be written) ALSO sets *result: what was found is the point of a failed dump.
 * NULL where a pointer is required is WARPTRACE_INVALID_ARGUMENT, never a crash.
 *
 * Memory. Strings and buffers the library returns are freed with warptrace_free; handles with
 * their own *_free. Inputs (JSON text, buffers) are read during the call only; buffers are
 * read in place, never copied.
 *
 * Threads. Every function is thread-safe and reentrant; handles are immutable after creation
 * and may be shared between threads. No function keeps global state the caller can see,
 * except the process-wide set of files read (an output never replaces an input).
 *
 * Dump requests (JSON object; every key optional):
 *   "output": PATH           trace file, replaced atomically when the dump succeeds ("-": stdout)
 *   "output_fd": N           or: an open file descriptor, written in place and left open
 *   "output_memory": true    or: the trace returned in *trace / *trace_bytes (warptrace_dump_ex)
 *   "format": "perfetto" | "json" | ""   (empty: from output's extension; memory/fd: json)
 *   "events": "x" | "be" | "mosaic"   Chrome JSON: complete events, begin/end pairs, or
 *                            exactly the events of JAX Mosaic GPU's own dump
 *   "json_args": "lean" | "full"
 *   "mosaic_overhead": bool  "mosaic" events: subtract Mosaic's overhead estimate (default true)
 *   "mosaic_clock_khz": N    "mosaic" events: 0 (default) counts a cycle as 1 ns, as Mosaic
 *                            does; N converts cycles at N kHz (calibrated: other numbers)
 *   "report": PATH           the verdict report JSON (written also when verification fails)
 *   "analysis_output": PATH  the analysis JSON
 *   "summary": bool          the summary and the diagnosis in the result
 *   "analysis": bool         the analysis in the result
 *   "causal_profile": bool   with the summary or the analysis: the causal profile under the
 *                            diagnosis and in the analysis JSON (default true, as the CLI)
 *   "allow_truncated": bool  keep each broken unit's valid prefix, as warnings
 *   "compensate_overhead": bool
 *   "sm_clock_khz": N        Mosaic buffers: their SM clock; warptrace buffers: the nominal rate
 *   "threads": N             threads the dump may use, the caller's included (default 0: the
 *                            cores there are; 1: the caller's alone); the output's bytes are
 *                            made and written by the others (the files do not depend on N)
 * Unknown keys and wrongly typed values are WARPTRACE_INVALID_ARGUMENT naming the key.
 *
 * Results (JSON object): "ok", "decoded", "written" (paths), "format", "kernel", "grid",
 * "block", "unit_kind", "capacity", "required_capacity", "kept_events", "dropped_events",
 * "slices", "errors", "warnings", "clock_note", "verdict_counts", "units" (one per trace
 * unit: record, block, block_index, unit, name, verdict, reason, kept_events, dropped,
 * overhead_cycles, repaired), "findings" (severity, kind, record, block, block_index, unit,
 * event, message, text), "overflows" (Mosaic), "summary" (or null), "summary_text", "analysis" (or null;
 * its "diagnosis" holds the ranked findings), "report" (the verdict report, or null when not
 * decoded).
 */
#ifndef WARPTRACE_CAPI_WARPTRACE_H_
#define WARPTRACE_CAPI_WARPTRACE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WARPTRACE_C_API_VERSION 1

typedef enum warptrace_code {
  WARPTRACE_OK = 0,
  WARPTRACE_CANCELLED = 1,
  WARPTRACE_UNKNOWN = 2,
  WARPTRACE_INVALID_ARGUMENT = 3,
  WARPTRACE_DEADLINE_EXCEEDED = 4,
  WARPTRACE_NOT_FOUND = 5,
  WARPTRACE_ALREADY_EXISTS = 6,
  WARPTRACE_PERMISSION_DENIED = 7,
  WARPTRACE_RESOURCE_EXHAUSTED = 8,
  WARPTRACE_FAILED_PRECONDITION = 9,
  WARPTRACE_ABORTED = 10,
  WARPTRACE_OUT_OF_RANGE = 11,
  WARPTRACE_UNIMPLEMENTED = 12,
  WARPTRACE_INTERNAL = 13,
  WARPTRACE_UNAVAILABLE = 14,
  WARPTRACE_DATA_LOSS = 15,
  WARPTRACE_UNAUTHENTICATED = 16
} warptrace_code;

typedef struct warptrace_error warptrace_error;
typedef struct warptrace_layout warptrace_layout;

/* The library's version ("0.2.0") and its C API version (WARPTRACE_C_API_VERSION). */
const char* warptrace_version(void);
int warptrace_c_api_version(void);

/* The error's code, its message (valid until warptrace_error_free), and the code's name
 * ("INVALID_ARGUMENT"). NULL is WARPTRACE_OK / "" / "OK". */
warptrace_code warptrace_error_code(const warptrace_error* error);
const char* warptrace_error_message(const warptrace_error* error);
const char* warptrace_code_name(warptrace_code code);
void warptrace_error_free(warptrace_error* error);

/* Frees a string or buffer the library returned. NULL is a no-op. */
void warptrace_free(void* p);

/* Layouts: from a "warptrace" sidecar's JSON text (length `size`), from a sidecar file, or
 * written back as sidecar JSON (*json freed with warptrace_free). */
warptrace_code warptrace_layout_from_json(const char* json, size_t size,
                                          warptrace_layout** layout, warptrace_error** error);
warptrace_code warptrace_layout_load(const char* path, warptrace_layout** layout,
                                     warptrace_error** error);
warptrace_code warptrace_layout_to_json(const warptrace_layout* layout, char** json,
                                        warptrace_error** error);
/* The bytes a buffer of this layout has (0 for NULL). */
uint64_t warptrace_layout_buffer_bytes(const warptrace_layout* layout);
void warptrace_layout_free(warptrace_layout* layout);

/* Dumps `bytes` bytes of trace words (host order) described by `layout`, as `request` (JSON,
 * above; NULL or "" is {}) says; *result (JSON) freed with warptrace_free. */
warptrace_code warptrace_dump(const warptrace_layout* layout, const void* buffer, size_t bytes,
                              const char* request, char** result, warptrace_error** error);
/* As warptrace_dump; with "output_memory": true the trace is returned in *trace (freed with
 * warptrace_free) and *trace_bytes. `trace` and `trace_bytes` may be NULL otherwise. */
warptrace_code warptrace_dump_ex(const warptrace_layout* layout, const void* buffer,
                                 size_t bytes, const char* request, char** result,
                                 void** trace, size_t* trace_bytes, warptrace_error** error);
/* Cancellation. `check` (NULL: none) is asked by every dump this thread starts afterwards
 * (warptrace_dump, _ex, _prefix, _mosaic), on this thread, before the first unit and then
 * every 65536 events or so (a few milliseconds); when it returns non-zero the dump stops at
 * once and fails with WARPTRACE_CANCELLED ("the dump was cancelled"): no output is replaced,
 * a temporary file is removed, no report is written. `data` is passed
 * to `check`. A binding that wants Ctrl-C to interrupt a long dump polls its own signal
 * state here (the Python package raises KeyboardInterrupt). */
void warptrace_set_cancel_check(int (*check)(void* data), void* data);

/* The settings a dump request may hold (the keys of `request` above; the CLI's dump flags
 * and python's dump() keywords are the same settings), as a JSON array, malloc'd (freed with
 * warptrace_free): [{"key", "type" ("string" | "bool" | "integer"), "default" (as text),
 * "min" and "max" (integers), "cli_flag" ("" when not on the CLI), "doc"}, ...]. A binding
 * checks its arguments against it instead of restating defaults and bounds. NULL only when
 * memory ran out. */
char* warptrace_dump_settings(void);

/* Reads PREFIX.bin + PREFIX.json (a "warptrace" or "mosaic-gpu" sidecar) and dumps it. */
warptrace_code warptrace_dump_prefix(const char* prefix, const char* request, char** result,
                                     warptrace_error** error);
/* Dumps a JAX Mosaic GPU profiler buffer (the words of its profiling output, host order).
 * `spec` (JSON): "grid" [x,y,z], "block" [x,y,z], "entries_per_warpgroup", "scope"
 * ("warpgroup" | "warp"), "names" (the interned region names, by id), "kernel_name". A
 * trace that overflowed fails with WARPTRACE_RESOURCE_EXHAUSTED naming the
 * entries_per_warpgroup that would have held it (unless "allow_truncated"). */
warptrace_code warptrace_dump_mosaic(const char* spec, const void* buffer, size_t bytes,
                                     const char* request, char** result, void** trace,
                                     size_t* trace_bytes, warptrace_error** error);

/* `warptrace diff`: two saved traces (PREFIX each) compared per region and iteration;
 * `options` (JSON): "compensate_overhead", "rows" (table rows; default all), "what_if" (a
 * what-if spec, as warptrace_what_if's speedups: the after side is then the launch predicted
 * from `before`, and `after` must be NULL or ""). *result (JSON): "table" (text) and "diff"
 * (the diff as JSON). */
warptrace_code warptrace_diff(const char* before, const char* after, const char* options,
                              char** result, warptrace_error** error);

/* `warptrace whatif`: predicts the launch of a saved trace (PREFIX) with some work faster,
 * over the trace's hand-off graph (profiler/analysis/whatif.h). `request` (JSON):
 * "speedups": ["[ROLE:]NAME=FACTOR|-DURATION", ...] (required), "causal_profile" (default
 * true), "output" (the predicted launch: .pftrace Perfetto, else Chrome JSON), "json" (the
 * what-if JSON file). *result: the what-if JSON ("format": "warptrace-whatif"). A bad spec
 * is WARPTRACE_INVALID_ARGUMENT naming it; a trace without hand-offs (a Mosaic buffer, a
 * version-1 trace) WARPTRACE_FAILED_PRECONDITION saying why. */
warptrace_code warptrace_what_if(const char* prefix, const char* request, char** result,
                                 warptrace_error** error);

/* ---- tables (docs/tables.md) -------------------------------------------------------------
 * A trace as the warptrace tables — launches, units, slices, waits, links, copies, sites,
 * roles, role_waits, critical_path, diagnosis — each exported as an Arrow C stream (the Arrow
 * C Data Interface's ArrowArrayStream, defined below with the spec's guards: any Arrow
 * implementation imports it without a copy, e.g. pyarrow's RecordBatchReader).
 *
 *   warptrace_tables* tables = NULL;
 *   if (warptrace_tables_from_prefix("/tmp/gemm", "{\"tags\": {\"rank\": \"3\"}}", &tables,
 *                                    &error) != WARPTRACE_OK) { ... }
 *   struct ArrowArrayStream stream;
 *   warptrace_tables_export(tables, "slices", &stream, &error);  // the caller owns `stream`
 *   warptrace_tables_free(tables);  // the stream keeps its data alive until released
 *   ... stream.get_schema / get_next ...; stream.release(&stream);
 *
 * Request (JSON object; every key optional): "launch_id" (string: the launch's key in every
 * table; default the prefix), "tags" (an object of strings, kept in launches.tags),
 * "allow_truncated" (default true: broken units keep their valid prefix and their verdict in
 * units.verdict; false: a trace that fails verification is an error, as warptrace_dump),
 * "compensate_overhead", "sm_clock_khz". Errors: warptrace_dump_prefix's. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};
#endif /* ARROW_C_STREAM_INTERFACE */

typedef struct warptrace_tables warptrace_tables;

/* The tables' schema version (every table's schema_version column). */
int warptrace_tables_schema_version(void);
/* Dumps PREFIX.bin + PREFIX.json into tables (*tables freed with warptrace_tables_free). */
warptrace_code warptrace_tables_from_prefix(const char* prefix, const char* request,
                                            warptrace_tables** tables, warptrace_error** error);
/* The number of tables, the i-th one's name (valid while `tables` lives; NULL past the end)
 * and a table's rows (-1 for an unknown name). */
size_t warptrace_tables_count(const warptrace_tables* tables);
const char* warptrace_tables_name(const warptrace_tables* tables, size_t i);
int64_t warptrace_tables_rows(const warptrace_tables* tables, const char* name);
/* Fills *out with a stream of table `name` (the caller owns it and calls out->release).
 * WARPTRACE_NOT_FOUND for an unknown name, naming the tables. */
warptrace_code warptrace_tables_export(const warptrace_tables* tables, const char* name,
                                       struct ArrowArrayStream* out, warptrace_error** error);
void warptrace_tables_free(warptrace_tables* tables);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* WARPTRACE_CAPI_WARPTRACE_H_ */
