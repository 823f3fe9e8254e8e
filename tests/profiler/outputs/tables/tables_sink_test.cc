// Tests of profiler/outputs/tables/tables_sink.h through the front end (DumpRequest::tables):
// the tables hold the timeline's slices, waits and links exactly.
#include "profiler/outputs/tables/tables_sink.h"

#include <cstdint>
#include <map>
#include <string>

#include "format/layout.h"
#include "gtest/gtest.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/outputs/tables/schema.h"
#include "profiler/outputs/tables/table.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

int64_t IntAt(const Table& t, const std::string& column, int64_t row) {
  return t.Find(column)->ints[row];
}

bool IsNull(const Table& t, const std::string& column, int64_t row) {
  const Column* c = t.Find(column);
  return c->spec.nullable && c->valid[row] == 0;
}

DumpOutcome DumpWithTables(const testing::PipelineTrace& p, bool allow_truncated = false) {
  DumpRequest request;
  request.collect = true;
  request.summary = true;
  request.verify.allow_truncated = allow_truncated;
  request.tables = TableOptions{.launch_id = "L", .tags_json = R"({"rank":"1"})"};
  return DumpToFiles(p.layout, p.words, request);
}

testing::PipelineTrace Pipeline(uint32_t version = abi::kTraceVersion) {
  testing::PipelineSpec spec;
  spec.version = version;
  spec.handoff_payloads = true;
  spec.blocks = 3;
  spec.iterations = 5;
  absl::StatusOr<testing::PipelineTrace> p = testing::SynthesizePipeline(spec);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(TablesSink, SlicesAreTheTimelinesSlicesOneRowEach) {
  const DumpOutcome o = DumpWithTables(Pipeline());
  ASSERT_THAT(o.status, IsOk());
  ASSERT_TRUE(o.tables.has_value() && o.timeline.has_value());
  const Table& slices = *o.tables->Get("slices");
  int64_t row = 0;
  for (const UnitTimeline& u : o.timeline->units) {
    for (const Slice& s : u.slices) {
      ASSERT_LT(row, slices.rows());
      EXPECT_EQ(IntAt(slices, "record", row), static_cast<int64_t>(u.record_index));
      EXPECT_EQ(IntAt(slices, "site", row), s.site);
      EXPECT_EQ(IntAt(slices, "start_ns", row), s.begin_ns);
      EXPECT_EQ(IntAt(slices, "duration_ns", row), s.end_ns - s.begin_ns);
      ++row;
    }
  }
  EXPECT_EQ(row, slices.rows());
  EXPECT_EQ(static_cast<uint64_t>(slices.rows()), o.result.slices);
}

// Units carry their cluster and CTA rank, the launch the cluster shape; a trace without
// clusters (every older one) gives each block a cluster of its own, rank 0.
TEST(TablesSink, UnitsCarryTheirClusterAndRank) {
  testing::PipelineSpec spec;
  spec.blocks = 4;
  spec.iterations = 2;
  absl::StatusOr<testing::PipelineTrace> p = testing::SynthesizePipeline(spec);
  ASSERT_THAT(p.status(), IsOk());
  for (const uint32_t cx : {1u, 2u}) {
    SCOPED_TRACE(cx);
    p->layout.cluster = {cx, 1, 1};
    const DumpOutcome o = DumpWithTables(*p);
    ASSERT_THAT(o.status, IsOk());
    const Table& launches = *o.tables->Get("launches");
    EXPECT_EQ(IntAt(launches, "cluster_x", 0), cx);
    EXPECT_EQ(IntAt(launches, "cluster_y", 0), 1);
    const Table& units = *o.tables->Get("units");
    ASSERT_GT(units.rows(), 0);
    for (int64_t row = 0; row < units.rows(); ++row) {
      const int64_t block = IntAt(units, "block", row);
      EXPECT_EQ(IntAt(units, "cluster", row), block / cx);
      EXPECT_EQ(IntAt(units, "cluster_rank", row), block % cx);
    }
    // The critical path is one per cluster under the cluster link scope: its regions say
    // which CTA's units they are; without clusters the column is null.
    const Table& path = *o.tables->Get("critical_path");
    ASSERT_GT(path.rows(), 0);
    for (int64_t row = 0; row < path.rows(); ++row) {
      if (cx == 1) {
        EXPECT_TRUE(IsNull(path, "cta_rank", row)) << row;
      } else {
        ASSERT_FALSE(IsNull(path, "cta_rank", row)) << row;
        EXPECT_LT(IntAt(path, "cta_rank", row), cx) << row;
      }
    }
  }
}

TEST(TablesSink, LinksAreEveryFlowOnceAndWaitsNameTheirReleasingArrival) {
  const DumpOutcome o = DumpWithTables(Pipeline());
  ASSERT_THAT(o.status, IsOk());
  std::map<uint64_t, Flow> flows;
  for (const UnitTimeline& u : o.timeline->units) {
    for (const Flow& f : u.flows) flows[f.id] = f;
  }
  const Table& links = *o.tables->Get("links");
  EXPECT_EQ(static_cast<size_t>(links.rows()), flows.size());
  const Table& waits = *o.tables->Get("waits");
  ASSERT_GT(waits.rows(), 0);
  for (int64_t r = 0; r < waits.rows(); ++r) {
    ASSERT_FALSE(IsNull(waits, "releasing_record", r)) << "wait row " << r;
    // The releasing arrival is a flow into this wait's unit that ends at the wait's end.
    bool found = false;
    for (const auto& [id, f] : flows) {
      found |= f.kind == FlowKind::kArrivalToRelease &&
               static_cast<int64_t>(f.to.record_index) == IntAt(waits, "record", r) &&
               static_cast<int64_t>(f.from.record_index) == IntAt(waits, "releasing_record", r) &&
               f.from.ns == IntAt(waits, "releasing_arrival_ns", r) &&
               f.to.ns == IntAt(waits, "wait_end_ns", r);
    }
    EXPECT_TRUE(found) << "wait row " << r;
  }
}

TEST(TablesSink, EveryTableIsKeyedAndVersioned) {
  const DumpOutcome o = DumpWithTables(Pipeline());
  ASSERT_THAT(o.status, IsOk());
  ASSERT_EQ(o.tables->tables.size(), TableNames().size());
  for (const auto& t : o.tables->tables) {
    ASSERT_EQ(t->columns()[0].spec.name, "schema_version") << t->name();
    ASSERT_EQ(t->columns()[1].spec.name, "launch_id") << t->name();
    for (int64_t r = 0; r < t->rows(); ++r) {
      EXPECT_EQ(t->columns()[0].ints[r], kTablesSchemaVersion);
    }
  }
  const Table& launches = *o.tables->Get("launches");
  ASSERT_EQ(launches.rows(), 1);
  const Column& tags = *launches.Find("tags");
  EXPECT_EQ(tags.chars, R"({"rank":"1"})");
  EXPECT_GT(o.tables->Get("diagnosis")->rows(), 0);
  EXPECT_GT(o.tables->Get("roles")->rows(), 0);
}

TEST(TablesSink, AUnitWithoutARecordHasARowWithItsVerdictAndNoSlices) {
  testing::PipelineTrace p = Pipeline();
  ASSERT_THAT(testing::InjectCorruption(p.layout, {testing::Corruption::kMissingUnit, 1},
                                        absl::MakeSpan(p.words)),
              IsOk());
  const DumpOutcome o = DumpWithTables(p, /*allow_truncated=*/true);
  ASSERT_THAT(o.status, IsOk());
  const Table& units = *o.tables->Get("units");
  ASSERT_GT(units.rows(), 1);
  EXPECT_EQ(IntAt(units, "record", 1), 1);
  EXPECT_TRUE(IsNull(units, "sm", 1));
  EXPECT_TRUE(IsNull(units, "start_ns", 1));
  const Column& verdict = *units.Find("verdict");
  EXPECT_EQ(verdict.chars.substr(verdict.offsets[1], verdict.offsets[2] - verdict.offsets[1]),
            "missing");
  const Table& slices = *o.tables->Get("slices");
  for (int64_t r = 0; r < slices.rows(); ++r) EXPECT_NE(IntAt(slices, "record", r), 1);
}

TEST(TablesSink, AFailedStrictDumpGivesNoTables) {
  testing::PipelineTrace p = Pipeline();
  ASSERT_THAT(testing::InjectCorruption(p.layout, {testing::Corruption::kUnknownSite, 1},
                                        absl::MakeSpan(p.words)),
              IsOk());
  const DumpOutcome o = DumpWithTables(p);
  EXPECT_FALSE(o.status.ok());
  EXPECT_FALSE(o.tables.has_value());
}

// SiteInfo::copy_engine / copy_bytes (as the builder's record plan fills them) reach the
// copies table; a copy site that does not know them keeps null engine and bytes.
TEST(TablesSink, CopiesCarryTheSiteTablesEngineAndBytes) {
  // Version 4: the synthesized copies record their ends, which a TMA copy of version 5 would
  // not (the dump derives them).
  testing::PipelineTrace p = Pipeline(4);
  uint32_t known = UINT32_MAX;
  for (SiteInfo& site : p.layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy || known != UINT32_MAX) continue;
    site.copy_engine = CopyEngine::kTma2d;
    site.copy_bytes = 8192;
    known = site.id;
  }
  ASSERT_NE(known, UINT32_MAX) << "the synthesized pipeline has a copy site";
  const DumpOutcome o = DumpWithTables(p);
  ASSERT_THAT(o.status, IsOk());
  const Table& copies = *o.tables->Get("copies");
  const Column* engine = copies.Find("engine");
  ASSERT_NE(engine, nullptr);
  int64_t with_engine = 0;
  for (int64_t row = 0; row < copies.rows(); ++row) {
    if (IntAt(copies, "site", row) != known) {
      EXPECT_TRUE(IsNull(copies, "engine", row) && IsNull(copies, "bytes", row)) << row;
      continue;
    }
    ++with_engine;
    ASSERT_FALSE(IsNull(copies, "engine", row));
    EXPECT_EQ(engine->chars.substr(engine->offsets[row],
                                   engine->offsets[row + 1] - engine->offsets[row]),
              "tma_2d");
    EXPECT_EQ(IntAt(copies, "bytes", row), 8192);
  }
  EXPECT_GT(with_engine, 0);
}

}  // namespace
}  // namespace warptrace
