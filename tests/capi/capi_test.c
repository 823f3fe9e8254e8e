/* The C API as a C program sees it, every function, its success and its error paths, run on
 * saved traces (write_test_traces).  capi_test DIR.  Built twice:
 *   - outside Bazel, with cc $(pkg-config --cflags --libs warptrace) capi_test.c against an
 *     install tree (tools/install.sh): //tests/capi:install_test;
 *   - by Bazel against //capi:libwarptrace.so in the build's configuration, so that under
 *     --config=asan or --config=ubsan a sanitized program loads a sanitized library:
 *     //tests/capi:capi_test. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <warptrace/warptrace.h>

static int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static char* slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)n + 1);
  if (fread(data, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(data); return NULL; }
  fclose(f);
  data[n] = '\0';
  *size = (size_t)n;
  return data;
}

/* Expects `code` to be `want` with an error whose message contains `needle`; frees it. */
static void expect_error(warptrace_code code, warptrace_error* error, warptrace_code want,
                         const char* needle, const char* what) {
  CHECK(code == want, "%s: code %s, expected %s (%s)", what, warptrace_code_name(code),
        warptrace_code_name(want), warptrace_error_message(error));
  CHECK(error != NULL, "%s: no error handle", what);
  CHECK(warptrace_error_code(error) == code, "%s: handle code differs", what);
  CHECK(strstr(warptrace_error_message(error), needle) != NULL, "%s: message \"%s\" lacks \"%s\"",
        what, warptrace_error_message(error), needle);
  warptrace_error_free(error);
}

/* The tables: every table's Arrow stream read as a C consumer reads it (schema, batches,
 * the end, release), its rows equal to warptrace_tables_rows; the errors. */
static void check_tables(const char* dir) {
  char prefix[4096];
  snprintf(prefix, sizeof prefix, "%s/pipeline", dir);
  warptrace_tables* tables = NULL;
  warptrace_error* error = NULL;
  warptrace_code code = warptrace_tables_from_prefix(
      prefix, "{\"launch_id\": \"p\", \"tags\": {\"rank\": \"2\"}}", &tables, &error);
  CHECK(code == WARPTRACE_OK && tables != NULL, "tables: %s", warptrace_error_message(error));
  if (tables == NULL) return;
  CHECK(warptrace_tables_schema_version() == 1, "schema version");
  CHECK(warptrace_tables_count(tables) == 11, "%zu tables", warptrace_tables_count(tables));
  CHECK(warptrace_tables_name(tables, 99) == NULL, "name past the end");
  struct ArrowArrayStream streams[11];
  for (size_t i = 0; i < warptrace_tables_count(tables) && i < 11; ++i) {
    const char* name = warptrace_tables_name(tables, i);
    code = warptrace_tables_export(tables, name, &streams[i], &error);
    CHECK(code == WARPTRACE_OK, "export %s", name);
  }
  int64_t slices_rows = warptrace_tables_rows(tables, "slices");
  warptrace_tables_free(tables);  /* the streams keep their tables alive */
  CHECK(slices_rows == 128, "slices rows %lld", (long long)slices_rows);
  for (size_t i = 0; i < 11; ++i) {
    struct ArrowArrayStream* s = &streams[i];
    struct ArrowSchema schema;
    CHECK(s->get_schema(s, &schema) == 0, "get_schema");
    CHECK(strcmp(schema.format, "+s") == 0 && schema.n_children >= 3, "struct schema");
    CHECK(strcmp(schema.children[0]->name, "schema_version") == 0, "first column");
    CHECK(strcmp(schema.children[1]->name, "launch_id") == 0, "second column");
    int64_t rows = 0;
    for (;;) {
      struct ArrowArray batch;
      CHECK(s->get_next(s, &batch) == 0, "get_next");
      if (batch.release == NULL) break;
      rows += batch.length;
      const int64_t* versions = (const int64_t*)batch.children[0]->buffers[1];
      CHECK(versions[0] == 1, "schema_version %lld", (long long)versions[0]);
      const int32_t* offsets = (const int32_t*)batch.children[1]->buffers[1];
      const char* chars = (const char*)batch.children[1]->buffers[2];
      CHECK(offsets[1] - offsets[0] == 1 && chars[0] == 'p', "launch_id");
      batch.release(&batch);
    }
    if (strcmp(schema.name, "slices") == 0) CHECK(rows == 128, "slices streamed %lld", (long long)rows);
    if (strcmp(schema.name, "launches") == 0) CHECK(rows == 1, "launches %lld", (long long)rows);
    schema.release(&schema);
    s->release(s);
    CHECK(s->release == NULL, "released");
  }
  snprintf(prefix, sizeof prefix, "%s/pipeline", dir);
  code = warptrace_tables_from_prefix(prefix, "{\"tags\": {\"rank\": 2}}", &tables, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "object of strings", "non-string tag");
  code = warptrace_tables_from_prefix(prefix, "{\"colour\": 1}", &tables, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "unknown key \"colour\"", "unknown key");
  snprintf(prefix, sizeof prefix, "%s/no_such_trace", dir);
  code = warptrace_tables_from_prefix(prefix, NULL, &tables, &error);
  expect_error(code, error, WARPTRACE_NOT_FOUND, "no_such_trace", "missing trace");
  snprintf(prefix, sizeof prefix, "%s/clean", dir);
  code = warptrace_tables_from_prefix(prefix, NULL, &tables, &error);
  CHECK(code == WARPTRACE_OK, "clean tables");
  struct ArrowArrayStream s;
  code = warptrace_tables_export(tables, "nope", &s, &error);
  expect_error(code, error, WARPTRACE_NOT_FOUND, "the tables are launches, units", "unknown table");
  warptrace_tables_free(tables);
}

/* Cancellation: a check that says stop fails the dump (its first question comes before the
 * first unit) and leaves the output as it was; with the check removed the same request
 * succeeds. */
static int stop_now(void* data) {
  ++*(int*)data;
  return 1;
}

static void check_cancel(const warptrace_layout* layout, const void* words, size_t bytes,
                         const char* dir) {
  char path[4096], request[8192];
  snprintf(path, sizeof path, "%s/cancelled.json", dir);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL && fputs("kept", f) >= 0 && fclose(f) == 0, "writing %s", path);
  snprintf(request, sizeof request, "{\"output\": \"%s\"}", path);
  int calls = 0;
  char* result = NULL;
  warptrace_error* error = NULL;
  warptrace_set_cancel_check(stop_now, &calls);
  warptrace_code code = warptrace_dump(layout, words, bytes, request, &result, &error);
  warptrace_set_cancel_check(NULL, NULL);
  CHECK(calls >= 1, "the check was asked %d times", calls);
  expect_error(code, error, WARPTRACE_CANCELLED, "cancelled", "cancelled dump");
  warptrace_free(result);
  size_t size = 0;
  char* kept = slurp(path, &size);
  CHECK(kept != NULL && strcmp(kept, "kept") == 0, "a cancelled dump left %s as it was", path);
  free(kept);
  result = NULL;
  code = warptrace_dump(layout, words, bytes, request, &result, &error);
  CHECK(code == WARPTRACE_OK && result != NULL, "dump without the check: %s",
        warptrace_error_message(error));
  warptrace_free(result);
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: capi_test DIR\n"); return 2; }
  const char* dir = argv[1];
  char path[4096];

  CHECK(warptrace_c_api_version() == WARPTRACE_C_API_VERSION, "api version");
  CHECK(strlen(warptrace_version()) >= 5, "version %s", warptrace_version());
  CHECK(strcmp(warptrace_code_name(WARPTRACE_DATA_LOSS), "DATA_LOSS") == 0, "code name");
  CHECK(warptrace_error_code(NULL) == WARPTRACE_OK && strcmp(warptrace_error_message(NULL), "") == 0,
        "NULL error");
  warptrace_free(NULL);
  warptrace_error_free(NULL);
  warptrace_layout_free(NULL);
  CHECK(warptrace_layout_buffer_bytes(NULL) == 0, "NULL layout bytes");

  /* The dump's settings: the request keys, with their types, defaults and bounds. */
  char* settings = warptrace_dump_settings();
  CHECK(settings != NULL && settings[0] == '[', "dump settings");
  if (settings != NULL) {
    CHECK(strstr(settings, "{\"key\":\"threads\",\"type\":\"integer\",\"default\":\"0\","
                           "\"min\":0,\"max\":4096,\"cli_flag\":\"threads\"") != NULL,
          "threads setting in %s", settings);
    CHECK(strstr(settings, "\"key\":\"output_memory\"") != NULL, "output_memory setting");
  }
  warptrace_free(settings);

  /* Layouts. */
  warptrace_layout* layout = NULL;
  warptrace_error* error = NULL;
  snprintf(path, sizeof path, "%s/clean.json", dir);
  warptrace_code code = warptrace_layout_load(path, &layout, &error);
  CHECK(code == WARPTRACE_OK && layout != NULL && error == NULL, "load: %s",
        warptrace_error_message(error));
  size_t json_size = 0;
  char* json = slurp(path, &json_size);
  warptrace_layout* parsed = NULL;
  code = warptrace_layout_from_json(json, json_size, &parsed, &error);
  CHECK(code == WARPTRACE_OK && parsed != NULL, "from_json: %s", warptrace_error_message(error));
  CHECK(warptrace_layout_buffer_bytes(parsed) == warptrace_layout_buffer_bytes(layout) &&
            warptrace_layout_buffer_bytes(layout) > 0, "buffer bytes");
  char* back = NULL;
  code = warptrace_layout_to_json(parsed, &back, &error);
  CHECK(code == WARPTRACE_OK && back != NULL && strstr(back, "\"format\"") != NULL, "to_json");
  warptrace_free(back);
  warptrace_layout_free(parsed);
  free(json);

  snprintf(path, sizeof path, "%s/no_such.json", dir);
  code = warptrace_layout_load(path, &parsed, &error);
  expect_error(code, error, WARPTRACE_NOT_FOUND, "no_such.json", "load missing");
  CHECK(parsed == NULL, "no layout on failure");
  code = warptrace_layout_from_json("{\"format\": 1}", 13, &parsed, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "format", "bad sidecar");
  code = warptrace_layout_from_json("{}", 2, NULL, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "layout is NULL", "NULL out");
  code = warptrace_layout_load(NULL, &parsed, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "path is NULL", "NULL path");
  code = warptrace_layout_to_json(NULL, &back, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "layout is NULL", "to_json NULL");

  /* Dumps of the words in memory: to a path, a descriptor, memory. */
  size_t bytes = 0;
  snprintf(path, sizeof path, "%s/clean.bin", dir);
  char* words = slurp(path, &bytes);
  CHECK(words != NULL && bytes == warptrace_layout_buffer_bytes(layout), "read buffer");
  char request[8192];
  snprintf(request, sizeof request,
           "{\"output\": \"%s/c.pftrace\", \"summary\": true, \"analysis\": true, "
           "\"report\": \"%s/c.verdict.json\"}", dir, dir);
  char* result = NULL;
  code = warptrace_dump(layout, words, bytes, request, &result, &error);
  CHECK(code == WARPTRACE_OK && result != NULL, "dump: %s", warptrace_error_message(error));
  CHECK(strstr(result, "\"ok\":true") && strstr(result, "\"kept_events\":2000") &&
            strstr(result, "\"diagnosis\"") && strstr(result, "c.pftrace"),
        "result %.200s", result);
  warptrace_free(result);
  struct stat st;
  snprintf(path, sizeof path, "%s/c.pftrace", dir);
  CHECK(stat(path, &st) == 0 && st.st_size > 0 && (st.st_mode & 0111) == 0,
        "the Perfetto file exists and is not executable");

  snprintf(path, sizeof path, "%s/c_fd.json", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  snprintf(request, sizeof request, "{\"output_fd\": %d}", fd);
  code = warptrace_dump(layout, words, bytes, request, &result, &error);
  close(fd);
  CHECK(code == WARPTRACE_OK, "dump fd: %s", warptrace_error_message(error));
  warptrace_free(result);
  void* trace = NULL;
  size_t trace_bytes = 0;
  code = warptrace_dump_ex(layout, words, bytes, "{\"output_memory\": true}", &result, &trace,
                           &trace_bytes, &error);
  CHECK(code == WARPTRACE_OK && trace != NULL && trace_bytes > 0, "dump memory: %s",
        warptrace_error_message(error));
  size_t fd_bytes = 0;
  char* from_fd = slurp(path, &fd_bytes);
  CHECK(from_fd != NULL && fd_bytes == trace_bytes && memcmp(from_fd, trace, trace_bytes) == 0,
        "the descriptor and memory traces are the same bytes (%zu vs %zu)", fd_bytes, trace_bytes);
  free(from_fd);
  warptrace_free(trace);
  warptrace_free(result);

  check_cancel(layout, words, bytes, dir);

  /* Dump errors: each names what to change. */
  code = warptrace_dump(layout, words, bytes - 4, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "words", "short buffer");
  CHECK(result == NULL, "no result when nothing decoded");
  code = warptrace_dump(layout, words + 1, bytes - 4, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "aligned", "unaligned");
  code = warptrace_dump(layout, words, bytes - 1, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "whole number", "odd bytes");
  code = warptrace_dump(NULL, words, bytes, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "layout is NULL", "NULL layout");
  code = warptrace_dump(layout, NULL, bytes, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "buffer is NULL", "NULL buffer");
  code = warptrace_dump(layout, words, bytes, NULL, NULL, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "result is NULL", "NULL result");
  code = warptrace_dump(layout, words, bytes, "{\"colour\": 1}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "unknown key \"colour\"", "unknown key");
  code = warptrace_dump(layout, words, bytes, "{\"summary\": 1}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "\"summary\" must be true or false",
               "wrong type");
  code = warptrace_dump(layout, words, bytes, "{\"threads\": -1}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "\"threads\" must be an integer from 0",
               "negative threads");
  code = warptrace_dump(layout, words, bytes, "[1", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "not JSON", "bad JSON");
  code = warptrace_dump(layout, words, bytes, "{\"format\": \"xml\", \"output\": \"x\"}", &result,
                        &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "unknown format 'xml'", "bad format");
  code = warptrace_dump(layout, words, bytes, "{\"output_memory\": true}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "warptrace_dump_ex", "memory without ex");
  snprintf(request, sizeof request, "{\"output\": \"%s/clean.json\"}", dir);
  code = warptrace_dump_prefix((snprintf(path, sizeof path, "%s/clean", dir), path), request,
                               &result, &error);
  expect_error(code, error, WARPTRACE_FAILED_PRECONDITION, "input", "output over the input");

  /* A corrupted buffer: the error names the unit, and the result still comes back. */
  snprintf(path, sizeof path, "%s/corrupt_unknown_site", dir);
  code = warptrace_dump_prefix(path, NULL, &result, &error);
  CHECK(code == WARPTRACE_DATA_LOSS, "corrupt: %s", warptrace_code_name(code));
  CHECK(error != NULL && strstr(warptrace_error_message(error), "block (1,0,0)") != NULL,
        "corrupt message: %s", warptrace_error_message(error));
  CHECK(result != NULL && strstr(result, "\"corrupt\":1") != NULL && strstr(result, "\"ok\":false"),
        "corrupt result %.200s", result ? result : "(null)");
  warptrace_error_free(error);
  warptrace_free(result);
  code = warptrace_dump_prefix(NULL, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "prefix is NULL", "NULL prefix");
  snprintf(path, sizeof path, "%s/absent", dir);
  code = warptrace_dump_prefix(path, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_NOT_FOUND, "absent", "missing prefix");

  /* Mosaic: one warpgroup trace of 2 blocks, then one that overflows. */
  uint32_t mosaic[2][2][11];
  memset(mosaic, 0, sizeof mosaic);
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 2; ++t) {
      uint32_t* w = mosaic[b][t];
      w[0] = 1000 + b; w[1] = b; w[2] = 4;
      w[3] = 0; w[4] = 100; w[5] = 0x80000000u; w[6] = 180;
    }
  }
  const char* spec =
      "{\"format\": \"mosaic-gpu\", \"grid\": [2], \"block\": [256], "
      "\"entries_per_warpgroup\": 11, \"names\": [\"kernel\"], \"kernel_name\": \"m\"}";
  code = warptrace_dump_mosaic(spec, mosaic, sizeof mosaic, "{\"summary\": true}", &result, NULL,
                               NULL, &error);
  CHECK(code == WARPTRACE_OK && strstr(result, "\"complete\":4"), "mosaic: %s %.200s",
        warptrace_error_message(error), result ? result : "");
  warptrace_free(result);
  /* Block 1's first trace records two kernel regions, then a third that does not fit: 6
   * events attempted, 4 held (entries 11 = 3 + 2 x 4); it needs 3 + 12 = 15 entries. */
  {
    uint32_t* w = mosaic[1][0];
    w[2] = 12;
    w[7] = 0; w[8] = 190; w[9] = 0x80000000u; w[10] = 200;
  }
  code = warptrace_dump_mosaic(spec, mosaic, sizeof mosaic, NULL, &result, NULL, NULL, &error);
  CHECK(code == WARPTRACE_RESOURCE_EXHAUSTED, "overflow: %s", warptrace_code_name(code));
  CHECK(error != NULL && strstr(warptrace_error_message(error), "entries_per_warpgroup") &&
            strstr(warptrace_error_message(error), "15"),
        "overflow message: %s", warptrace_error_message(error));
  warptrace_error_free(error);
  warptrace_free(result);
  code = warptrace_dump_mosaic("{\"format\": \"mosaic-gpu\"}", mosaic, sizeof mosaic, NULL,
                               &result, NULL, NULL, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "grid", "bad spec");
  code = warptrace_dump_mosaic(NULL, mosaic, sizeof mosaic, NULL, &result, NULL, NULL, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "spec is NULL", "NULL spec");

  /* Diff. */
  char before[4096], after[4096];
  snprintf(before, sizeof before, "%s/clean", dir);
  snprintf(after, sizeof after, "%s/clean_large", dir);
  code = warptrace_diff(before, after, "{\"rows\": 3}", &result, &error);
  CHECK(code == WARPTRACE_OK && strstr(result, "\"table\"") && strstr(result, "\"diff\":{"),
        "diff: %s", warptrace_error_message(error));
  warptrace_free(result);
  code = warptrace_diff(before, NULL, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "after is NULL", "diff NULL");
  code = warptrace_diff(before, after, "{\"rows\": -1}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "\"rows\"", "diff rows");
  snprintf(path, sizeof path, "%s/corrupt_unknown_site", dir);
  code = warptrace_diff(before, path, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_DATA_LOSS, "after=", "diff corrupt");

  /* What-if. */
  code = warptrace_what_if(before, "{\"speedups\": [\"mma=0.5\"]}", &result, &error);
  expect_error(code, error, WARPTRACE_FAILED_PRECONDITION, "hand-offs", "what-if without hand-offs");
  code = warptrace_what_if(before, "{}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "no \"speedups\"", "what-if no spec");
  code = warptrace_what_if(before, "{\"speedups\": 1}", &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "a list of strings", "what-if type");
  code = warptrace_what_if(NULL, NULL, &result, &error);
  expect_error(code, error, WARPTRACE_INVALID_ARGUMENT, "prefix is NULL", "what-if NULL");
  snprintf(path, sizeof path, "%s/pipeline", dir);
  code = warptrace_what_if(path, "{\"speedups\": [\"load=0.5\"]}", &result, &error);
  CHECK(code == WARPTRACE_OK && result != NULL && strstr(result, "\"predicted_ns\""),
        "what-if: %s", warptrace_error_message(error));
  warptrace_free(result);

  warptrace_layout_free(layout);
  free(words);
  check_tables(dir);
  if (failures == 0) printf("capi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
