// The Arrow C Data Interface and C Stream Interface: the stable C ABI by which Arrow
// implementations (pyarrow, DuckDB, Polars, arrow-rs, ...) hand columnar data to each other
// without a copy and without linking a common library. These are the spec's definitions,
// verbatim (https://arrow.apache.org/docs/format/CDataInterface.html and
// CStreamInterface.html); the include guards are the spec's, so a translation unit that also
// includes Arrow's own headers (or capi/warptrace.h, which carries the same definitions for C
// callers) sees each struct once. No Arrow library is linked: warptrace writes these structs
// itself (arrow_export.h).
//
// Ownership (the spec's): whoever receives a struct with a non-NULL `release` owns it and
// must call release(&s) exactly once (or move it elsewhere: copy the struct bytes and set the
// source's release to NULL). A released struct has release == NULL.
#ifndef WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_C_ABI_H_
#define WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_C_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  // Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  // Release callback
  void (*release)(struct ArrowSchema*);
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  // Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  // Release callback
  void (*release)(struct ArrowArray*);
  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  // Callbacks providing stream functionality
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);

  // Release callback
  void (*release)(struct ArrowArrayStream*);

  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

#ifdef __cplusplus
}
#endif

#endif  // WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_C_ABI_H_
