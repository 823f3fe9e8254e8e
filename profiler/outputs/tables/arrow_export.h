// Exports a Table (table.h) through the Arrow C Data Interface (arrow_c_abi.h) without a
// copy: the exported arrays point into the Table's own buffers, which stay alive (shared)
// until the consumer releases the last struct that refers to them. Only validity and bool
// bitmaps are made at export (Arrow packs them 8 rows to a byte; the Table keeps a byte per row).
//
//   std::shared_ptr<const Table> slices = ...;
//   ArrowArrayStream stream;
//   ExportTableStream(slices, &stream);  // the caller (e.g. pyarrow) now owns `stream`
//
// The schema is a struct ("+s") of the table's columns (named, nullable flag set on nullable
// ones); the stream yields the whole table as one record batch (none when it has no rows),
// then the end of the stream. Every released struct may be released in any order (children
// moved out by a consumer keep the data alive on their own), as the spec allows.
// Thread-safety: the exported structs may be released from any thread; one stream must not be
// used from two threads at once (the spec's rule).
#ifndef WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_EXPORT_H_
#define WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_EXPORT_H_

#include <memory>

#include "profiler/outputs/tables/arrow_c_abi.h"
#include "profiler/outputs/tables/table.h"

namespace warptrace {

// Fills `out` (which the caller then owns) with the table's schema.
void ExportTableSchema(std::shared_ptr<const Table> table, ArrowSchema* out);
// Fills `out` with the whole table as one struct array (a record batch).
void ExportTableArray(std::shared_ptr<const Table> table, ArrowArray* out);
// Fills `out` with a stream of the table (above).
void ExportTableStream(std::shared_ptr<const Table> table, ArrowArrayStream* out);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_TABLES_ARROW_EXPORT_H_
