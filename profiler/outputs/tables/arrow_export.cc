#include "profiler/outputs/tables/arrow_export.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "profiler/outputs/tables/arrow_c_abi.h"
#include "profiler/outputs/tables/table.h"

namespace warptrace {
namespace {

// What one exported array (a batch and its children) points into. Each struct of the export
// holds its own reference, so a child moved out by the consumer outlives its parent safely.
struct ArrayState {
  std::shared_ptr<const Table> table;
  std::vector<std::vector<uint8_t>> bitmaps;
  std::vector<std::array<const void*, 3>> buffers;  // per column
  std::vector<ArrowArray> children;
  std::vector<ArrowArray*> child_pointers;
  const void* struct_buffers[1] = {nullptr};
};

struct SchemaState {
  std::shared_ptr<const Table> table;
  std::vector<ArrowSchema> children;
  std::vector<ArrowSchema*> child_pointers;
};

template <typename State, typename Struct>
void ReleaseStruct(Struct* s) {
  if (s->release == nullptr) return;
  for (int64_t i = 0; i < s->n_children; ++i) {
    Struct* child = s->children[i];
    if (child->release != nullptr) child->release(child);
  }
  delete static_cast<std::shared_ptr<State>*>(s->private_data);
  s->release = nullptr;
}

void ReleaseArray(ArrowArray* a) { ReleaseStruct<ArrayState>(a); }
void ReleaseSchema(ArrowSchema* s) { ReleaseStruct<SchemaState>(s); }

// Arrow's bitmap: bit i of byte i / 8, least significant first.
std::vector<uint8_t> PackBits(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> bits((bytes.size() + 7) / 8, 0);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != 0) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  return bits;
}

const void* Pack(ArrayState& state, const std::vector<uint8_t>& bytes) {
  state.bitmaps.push_back(PackBits(bytes));
  return state.bitmaps.back().data();
}

void FillColumn(ArrayState& state, const Column& c, int64_t rows,
                const std::shared_ptr<ArrayState>& self, ArrowArray& out,
                std::array<const void*, 3>& buffers) {
  buffers = {nullptr, nullptr, nullptr};
  if (c.nulls > 0) buffers[0] = Pack(state, c.valid);
  int64_t n_buffers = 2;
  switch (c.spec.type) {
    case ColumnType::kInt64: buffers[1] = c.ints.data(); break;
    case ColumnType::kFloat64: buffers[1] = c.doubles.data(); break;
    case ColumnType::kBool: buffers[1] = Pack(state, c.bools); break;
    case ColumnType::kUtf8:
      buffers[1] = c.offsets.data();
      buffers[2] = c.chars.data();
      n_buffers = 3;
      break;
  }
  out = ArrowArray{};
  out.length = rows;
  out.null_count = c.nulls;
  out.offset = 0;
  out.n_buffers = n_buffers;
  out.n_children = 0;
  out.buffers = buffers.data();
  out.children = nullptr;
  out.dictionary = nullptr;
  out.release = &ReleaseArray;
  out.private_data = new std::shared_ptr<ArrayState>(self);
}

struct StreamState {
  std::shared_ptr<const Table> table;
  bool sent = false;
};

StreamState& StateOf(ArrowArrayStream* s) { return *static_cast<StreamState*>(s->private_data); }

int StreamSchema(ArrowArrayStream* s, ArrowSchema* out) {
  if (s == nullptr || s->release == nullptr || out == nullptr) return EINVAL;
  ExportTableSchema(StateOf(s).table, out);
  return 0;
}

int StreamNext(ArrowArrayStream* s, ArrowArray* out) {
  if (s == nullptr || s->release == nullptr || out == nullptr) return EINVAL;
  StreamState& state = StateOf(s);
  if (state.sent || state.table->rows() == 0) {
    *out = ArrowArray{};
    out->release = nullptr;  // the end of the stream
    return 0;
  }
  state.sent = true;
  ExportTableArray(state.table, out);
  return 0;
}

const char* StreamError(ArrowArrayStream*) { return nullptr; }

void StreamRelease(ArrowArrayStream* s) {
  if (s->release == nullptr) return;
  delete static_cast<StreamState*>(s->private_data);
  s->release = nullptr;
}

}  // namespace

void ExportTableSchema(std::shared_ptr<const Table> table, ArrowSchema* out) {
  auto state = std::make_shared<SchemaState>();
  state->table = std::move(table);
  const std::vector<Column>& columns = state->table->columns();
  state->children.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    ArrowSchema& c = state->children[i];
    c = ArrowSchema{};
    c.format = ArrowFormat(columns[i].spec.type);
    c.name = columns[i].spec.name.c_str();
    c.metadata = nullptr;
    c.flags = columns[i].spec.nullable ? ARROW_FLAG_NULLABLE : 0;
    c.release = &ReleaseSchema;
    c.private_data = new std::shared_ptr<SchemaState>(state);
    state->child_pointers.push_back(&c);
  }
  *out = ArrowSchema{};
  out->format = "+s";
  out->name = state->table->name().c_str();
  out->metadata = nullptr;
  out->flags = 0;
  out->n_children = static_cast<int64_t>(columns.size());
  out->children = state->child_pointers.data();
  out->dictionary = nullptr;
  out->release = &ReleaseSchema;
  out->private_data = new std::shared_ptr<SchemaState>(state);
}

void ExportTableArray(std::shared_ptr<const Table> table, ArrowArray* out) {
  auto state = std::make_shared<ArrayState>();
  state->table = std::move(table);
  const std::vector<Column>& columns = state->table->columns();
  const int64_t rows = state->table->rows();
  state->bitmaps.reserve(2 * columns.size());  // no reallocation: buffers point into them
  state->buffers.resize(columns.size());
  state->children.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    FillColumn(*state, columns[i], rows, state, state->children[i], state->buffers[i]);
    state->child_pointers.push_back(&state->children[i]);
  }
  *out = ArrowArray{};
  out->length = rows;
  out->null_count = 0;
  out->offset = 0;
  out->n_buffers = 1;
  out->n_children = static_cast<int64_t>(columns.size());
  out->buffers = state->struct_buffers;
  out->children = state->child_pointers.data();
  out->dictionary = nullptr;
  out->release = &ReleaseArray;
  out->private_data = new std::shared_ptr<ArrayState>(state);
}

void ExportTableStream(std::shared_ptr<const Table> table, ArrowArrayStream* out) {
  *out = ArrowArrayStream{};
  out->get_schema = &StreamSchema;
  out->get_next = &StreamNext;
  out->get_last_error = &StreamError;
  out->release = &StreamRelease;
  out->private_data = new StreamState{std::move(table)};
}

}  // namespace warptrace
