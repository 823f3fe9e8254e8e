// PrintTraceDiff and WriteTraceDiffJson (diff.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/utf8.h"
#include "llvm/Support/JSON.h"
#include "profiler/analysis/diff.h"

namespace warptrace {
namespace {

namespace json = llvm::json;

std::string Us(double ns) { return absl::StrFormat("%.3f", ns / 1e3); }
std::string P(double p) { return p < 1e-4 ? absl::StrFormat("%.1e", p) : absl::StrFormat("%.2g", p); }

std::vector<std::string> Cells(const DiffRow& r) {
  return {r.role,
          r.name,
          r.iteration < 0 ? "*" : absl::StrCat(r.iteration),
          absl::StrCat(r.count_before),
          absl::StrCat(r.count_after),
          Us(r.mean_before),
          Us(r.mean_after),
          Us(r.p50_before),
          Us(r.p50_after),
          Us(r.p95_before),
          Us(r.p95_after),
          absl::StrFormat("%+.1f%%", r.change * 100),
          absl::StrFormat("%+.3f", r.self_delta_per_block_ns / 1e3),
          P(r.p_value),
          r.significant ? "yes" : "no"};
}

void Table(const std::vector<std::vector<std::string>>& rows, llvm::raw_ostream& os) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      // Text columns (role, region) left-aligned, numbers right-aligned.
      absl::StrAppend(&line, c > 0 ? "  " : "", c < 2 ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

const std::vector<std::string> kHeader = {
    "role", "region", "iter", "n_before", "n_after", "mean_us_before", "mean_us_after",
    "p50_before", "p50_after", "p95_before", "p95_after", "change", "dself_us/block", "p",
    "significant"};

void Shares(const char* title, const std::vector<ShareChange>& shares, llvm::raw_ostream& os) {
  if (shares.empty()) {
    os << title << ": no share moved\n";
    return;
  }
  os << title << ":\n";
  for (const ShareChange& s : shares) {
    os << absl::StrFormat("  %s %s: %.1f%% -> %.1f%% (%+.1f points)\n", s.role, s.name,
                          s.before * 100, s.after * 100, (s.after - s.before) * 100);
  }
}

void Row(json::OStream& j, const DiffRow& r) {
  j.object([&] {
    j.attribute("role", ValidUtf8(r.role));
    j.attribute("name", ValidUtf8(r.name));
    j.attribute("iteration", r.iteration);
    j.attribute("kind", SiteKindName(r.kind));
    j.attribute("count_before", r.count_before);
    j.attribute("count_after", r.count_after);
    j.attribute("mean_before_ns", r.mean_before);
    j.attribute("mean_after_ns", r.mean_after);
    j.attribute("p50_before_ns", r.p50_before);
    j.attribute("p50_after_ns", r.p50_after);
    j.attribute("p95_before_ns", r.p95_before);
    j.attribute("p95_after_ns", r.p95_after);
    j.attribute("change", r.change);
    j.attribute("self_delta_per_block_ns", r.self_delta_per_block_ns);
    j.attribute("p_value", r.p_value);
    j.attribute("significant", r.significant);
  });
}

void ShareArray(json::OStream& j, const char* key, const std::vector<ShareChange>& shares) {
  j.attributeArray(key, [&] {
    for (const ShareChange& s : shares) {
      j.object([&] {
        j.attribute("role", s.role);
        j.attribute("name", s.name);
        j.attribute("before", s.before);
        j.attribute("after", s.after);
      });
    }
  });
}

}  // namespace

void PrintTraceDiff(const TraceDiff& diff, llvm::raw_ostream& os, size_t max_rows) {
  os << absl::StrFormat(
      "before: kernel %s, %d blocks; after: kernel %s, %d blocks; %d rows tested "
      "(Mann-Whitney, significant: p x %d < alpha and |change| above the noise floor)\n",
      diff.kernel_before, diff.blocks_before, diff.kernel_after, diff.blocks_after,
      diff.rows_tested, diff.rows_tested);
  std::vector<std::vector<std::string>> rows = {kHeader};
  for (const DiffRow& r : diff.kernel) rows.push_back(Cells(r));
  os << "kernel:\n";
  Table(rows, os);
  size_t significant = 0;
  for (const DiffRow& r : diff.rows) significant += r.significant;
  os << absl::StrFormat("regions (%d of %d significant, ranked by |change of self time per "
                        "block|):\n",
                        significant, diff.rows.size());
  rows = {kHeader};
  for (size_t i = 0; i < diff.rows.size() && i < max_rows; ++i) rows.push_back(Cells(diff.rows[i]));
  Table(rows, os);
  if (diff.rows.size() > max_rows) {
    os << "  ... " << (diff.rows.size() - max_rows) << " more rows (--json has them all)\n";
  }
  Shares(diff.per_unit_only ? "critical-path share of block time (per unit only)"
                            : "critical-path share of block time",
         diff.critical_path, os);
  Shares("wait share of unit time", diff.waits, os);
}

void WriteTraceDiffJson(const TraceDiff& diff, llvm::raw_ostream& os) {
  json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("format", "warptrace-diff");
    j.attribute("version", 1);
    j.attribute("kernel_before", diff.kernel_before);
    j.attribute("kernel_after", diff.kernel_after);
    j.attribute("blocks_before", diff.blocks_before);
    j.attribute("blocks_after", diff.blocks_after);
    j.attribute("rows_tested", diff.rows_tested);
    j.attribute("per_unit_only", diff.per_unit_only);
    j.attributeArray("kernel", [&] {
      for (const DiffRow& r : diff.kernel) Row(j, r);
    });
    j.attributeArray("rows", [&] {
      for (const DiffRow& r : diff.rows) Row(j, r);
    });
    ShareArray(j, "critical_path", diff.critical_path);
    ShareArray(j, "waits", diff.waits);
  });
}

}  // namespace warptrace
