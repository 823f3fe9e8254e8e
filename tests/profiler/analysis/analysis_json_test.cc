#include "profiler/analysis/analysis_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"

namespace warptrace {
namespace {

Analysis Sample() {
  Analysis a;
  a.kernel_name = "gemm";
  a.device_name = "dev\xff";  // invalid UTF-8 is repaired
  a.units = 2;
  a.diagnosis.push_back({"bound", 0.4, "producer-bound: ...", HostClockSupport::kHostOnly});
  RoleAnalysis role;
  role.role = "consumer";
  role.units = 2;
  role.waiting_share = 0.25;
  role.waits.push_back({"full[*]", 8, 400, 0.25, 16, 0.04});
  role.barriers.push_back({"full[2]", 4, 300, 0.2, 8, 0.03});
  SiteTime site;
  site.site = 2;
  site.name = "mma";
  site.waits.push_back({"full[*]", 100, 0.1});
  role.sites.push_back(site);
  role.slowest_unit = {3, {3, 0, 0}, 1, 2, "consumer", 900, 1.8, ""};
  a.roles.push_back(role);
  a.critical_path.per_unit_only = false;
  a.critical_path.trace_links = 12;
  a.critical_path.regions.push_back({"producer", 1, "load", 4, 1.0, 9600, 0.96});
  a.grid.blocks = 4;
  a.grid.outlier_blocks.push_back({6, {6, 0, 0}, 0, 2, "", 7500, 3.0, "seq 6"});
  a.grid.early_return_blocks = 1;
  a.grid.working_blocks = 3;
  DimImbalance dim;
  dim.dim = 'y';
  dim.name = "seq";
  dim.values = 2;
  dim.explained = 0.9;
  a.grid.dims.push_back(dim);
  a.overhead.ns_per_event = 10;
  return a;
}

TEST(AnalysisJsonTest, WritesTheDocumentedFields) {
  std::string text;
  llvm::raw_string_ostream os(text);
  WriteAnalysisJson(Sample(), os);
  os.flush();
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "warptrace-analysis");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["kernel"], "gemm");
  EXPECT_EQ(j["diagnosis"][0]["kind"], "bound");
  EXPECT_EQ(j["roles"][0]["role"], "consumer");
  EXPECT_EQ(j["roles"][0]["waits"][0]["family"], "full[*]");
  EXPECT_EQ(j["roles"][0]["waits"][0]["overhead_ns"], 16);
  EXPECT_EQ(j["roles"][0]["barriers"][0]["barrier"], "full[2]");
  EXPECT_EQ(j["roles"][0]["barriers"][0]["wait_ns"], 300);
  EXPECT_FALSE(j["roles"][0]["barriers"][0].contains("family"));
  EXPECT_EQ(j["critical_path"]["trace_links"], 12);
  EXPECT_EQ(j["roles"][0]["sites"][0]["waits"][0]["share"], 0.1);
  EXPECT_EQ(j["roles"][0]["slowest_unit"]["block_index"], nlohmann::json({3, 0, 0}));
  EXPECT_EQ(j["roles"][0]["slowest_unit"]["unit"], 1);
  EXPECT_EQ(j["critical_path"]["per_unit_only"], false);
  EXPECT_EQ(j["critical_path"]["regions"][0]["name"], "load");
  EXPECT_EQ(j["critical_path"]["regions"][0]["mean_share"], 0.96);
  EXPECT_EQ(j["grid"]["outlier_blocks"][0]["sm"], 2);
  EXPECT_FALSE(j["grid"]["outlier_blocks"][0].contains("unit"));
  // Issue 54: block labels, early returns, dimensions, what a host clock supports.
  EXPECT_EQ(j["grid"]["outlier_blocks"][0]["label"], "seq 6");
  EXPECT_FALSE(j["roles"][0]["slowest_unit"].contains("label"));
  EXPECT_EQ(j["grid"]["early_return_blocks"], 1);
  EXPECT_EQ(j["grid"]["working_blocks"], 3);
  EXPECT_EQ(j["grid"]["dims"][0]["dim"], "y");
  EXPECT_EQ(j["grid"]["dims"][0]["name"], "seq");
  EXPECT_EQ(j["diagnosis"][0]["host_clock"], "host_only");
  EXPECT_EQ(j["overhead"]["ns_per_event"], 10.0);
}

}  // namespace
}  // namespace warptrace
