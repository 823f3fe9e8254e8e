#include "profiler/outputs/mosaic_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/Support/JSON.h"

namespace warptrace {
namespace {

// Mosaic's block index (x-major) of warptrace's x-fastest block_linear.
uint64_t MosaicBlockIndex(const Dim3& grid, uint32_t block_linear) {
  const uint64_t bx = block_linear % grid.x;
  const uint64_t by = (block_linear / grid.x) % grid.y;
  const uint64_t bz = block_linear / (uint64_t{grid.x} * grid.y);
  return (bx * grid.y + by) * grid.z + bz;
}

// A double as Python's repr writes it for Mosaic's range (0 <= v < 2^32 / 1000): the
// shortest fixed-point digits that read back as `v`, with ".0" when they have no point.
// Python json.dump writes floats this way, so the numbers parse to the same doubles.
void WritePythonFloat(llvm::raw_ostream& os, double v) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf) - 2, v,
                                               std::chars_format::fixed);
  char* end = r.ptr;
  if (std::find(buf, end, '.') == end) {
    *end++ = '.';
    *end++ = '0';
  }
  os.write(buf, end - buf);
}

}  // namespace

MosaicTraceSink::MosaicTraceSink(const MosaicTimestamps& options, llvm::raw_ostream& os)
    : options_(options), os_(os) {}

absl::Status MosaicTraceSink::Begin(const TraceBegin& begin) {
  layout_ = begin.layout;
  traces_.clear();
  events_.clear();
  names_.clear();
  for (const SiteInfo& site : layout_->sites) {
    const llvm::StringRef name(site.name);
    names_[site.id] = llvm::json::isUTF8(name) ? site.name : llvm::json::fixUTF8(name);
  }
  return absl::OkStatus();
}

absl::Status MosaicTraceSink::AddUnit(const UnitView& unit) {
  if (layout_ == nullptr) return absl::FailedPreconditionError("AddUnit before Begin");
  const DecodedRecord& record = *unit.record;
  if (record.header_problem != HeaderProblem::kNone || record.events.empty()) {
    return absl::OkStatus();  // Mosaic leaves out a trace without events
  }
  for (size_t k = 0; k < record.events.size(); ++k) {
    const uint32_t site = abi::TagSiteV1(record.events[k].tag);
    if (!names_.contains(site)) {  // Mosaic's KeyError
      return absl::InvalidArgumentError(absl::StrCat(
          "block ", record.block_linear, " unit ", record.unit_index, " event ", k,
          " has name id ", site, ", which the layout's sites do not name"));
    }
  }
  Trace t;
  t.mosaic_index = MosaicBlockIndex(layout_->grid, record.block_linear) *
                       UnitsPerBlock(*layout_) +
                   record.unit_index;
  t.sm_id = record.sm_id;
  t.start = static_cast<uint32_t>(record.start_globaltimer);
  t.first_event = events_.size();
  t.event_count = static_cast<uint32_t>(record.events.size());
  events_.insert(events_.end(), record.events.begin(), record.events.end());
  traces_.push_back(t);
  return absl::OkStatus();
}

absl::Status MosaicTraceSink::End(const TraceEnd& /*end*/) {
  if (layout_ == nullptr) return absl::FailedPreconditionError("End before Begin");
  // One overhead estimate for the whole buffer, in uint32 as Mosaic's numpy computes it.
  uint32_t overhead = 0;
  if (options_.compensate_overhead) {
    uint32_t smallest = kMosaicOverheadCeilingCycles;
    for (const Trace& t : traces_) {
      const abi::Event* e = events_.data() + t.first_event;
      for (uint32_t k = 1; k < t.event_count; ++k) {
        smallest = std::min(smallest, static_cast<uint32_t>(e[k].clock - e[k - 1].clock));
      }
    }
    overhead = smallest - 1u;  // wraps for a step of 0, as Mosaic's does
  }

  // Traces by first ts (= start, the first event's time being 0), ties in Mosaic's order.
  std::vector<const Trace*> order;
  order.reserve(traces_.size());
  for (const Trace& t : traces_) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const Trace* a, const Trace* b) {
    return std::pair(a->start, a->mosaic_index) < std::pair(b->start, b->mosaic_index);
  });

  llvm::json::OStream j(os_);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      for (const Trace* t : order) {
        const abi::Event* e = events_.data() + t->first_event;
        const int64_t pid = int64_t{1} + t->sm_id;
        const int64_t tid = static_cast<int64_t>(1 + t->mosaic_index);
        uint32_t last = 0;
        for (uint32_t k = 0; k < t->event_count; ++k) {
          const std::string& name = names_.find(abi::TagSiteV1(e[k].tag))->second;
          uint32_t time = e[k].clock - e[0].clock - k * overhead;
          if (k > 0 && last >= time) time = last + 1u;
          last = time;
          uint32_t ns = time;
          if (options_.sm_clock_khz != 0) {
            ns = static_cast<uint32_t>(static_cast<uint64_t>(
                std::llround(static_cast<double>(time) * 1e6 /
                             static_cast<double>(options_.sm_clock_khz))));
          }
          const uint32_t at = t->start + ns;
          j.object([&] {
            j.attribute("name", name);
            j.attribute("ph", abi::TagIsExit(e[k].tag) ? "E" : "B");
            j.attributeBegin("ts");
            j.rawValue([&](llvm::raw_ostream& os) {
              WritePythonFloat(os, static_cast<double>(at) / 1e3);
            });
            j.attributeEnd();
            j.attribute("pid", pid);
            j.attribute("tid", tid);
          });
        }
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace warptrace
