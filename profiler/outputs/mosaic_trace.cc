#include "profiler/outputs/mosaic_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "profiler/outputs/event_template.h"

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

  // Each event is one rawValue: its site's text up to "ts" (json::OStream serialized it once,
  // name escaped), the ts, then its trace's pid and tid.
  auto event_template = [](const std::string& name, const char* ph) {
    return EventTemplate::Build([&](llvm::json::OStream& json) {
      json.object([&] {
        json.attribute("name", name);
        json.attribute("ph", ph);
        for (const char* key : {"ts", "pid", "tid"}) {
          json.attributeBegin(key);
          EventTemplate::Hole(json);
          json.attributeEnd();
        }
      });
    });
  };
  absl::flat_hash_map<uint32_t, std::string> heads;  // by tag (site | exit)
  for (const auto& [site, name] : names_) {
    heads[site] = event_template(name, "B").piece(0);
    heads[site | abi::kExitFlag] = event_template(name, "E").piece(0);
  }
  const EventTemplate any = event_template("", "B");

  llvm::json::OStream j(os_);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      for (const Trace* t : order) {
        const abi::Event* e = events_.data() + t->first_event;
        char pid[24], tid[24];
        const llvm::StringRef ids[] = {
            llvm::StringRef(pid, std::to_chars(pid, pid + sizeof(pid),
                                               uint64_t{1} + t->sm_id).ptr - pid),
            llvm::StringRef(tid, std::to_chars(tid, tid + sizeof(tid),
                                               uint64_t{1} + t->mosaic_index).ptr - tid)};
        const std::string tail = any.Tail(1, ids);
        uint32_t last = 0;
        for (uint32_t k = 0; k < t->event_count; ++k) {
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
          const std::string& head =
              heads.find(abi::TagSiteV1(e[k].tag) | (e[k].tag & abi::kExitFlag))->second;
          j.rawValue([&](llvm::raw_ostream& os) {
            os << head;
            WritePythonFloat(os, static_cast<double>(at) / 1e3);
            os << tail;
          });
        }
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace warptrace
