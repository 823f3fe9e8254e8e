#include "profiler/outputs/mosaic_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/chunk_pipeline.h"
#include "base/utf8.h"
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
// Writes at `p` (room for 64 bytes) and returns the end.
char* WritePythonFloat(char* p, double v) {
  const std::to_chars_result r = std::to_chars(p, p + 62, v, std::chars_format::fixed);
  char* end = r.ptr;
  if (std::find(p, end, '.') == end) {
    *end++ = '.';
    *end++ = '0';
  }
  return end;
}

}  // namespace

// The event text of End: per tag the piece before "ts", per trace the piece after it.
struct MosaicTraceSink::Format {
  Format(uint64_t sm_clock_khz, uint32_t overhead, bool close_truncated, EventTemplate any)
      : sm_clock_khz(sm_clock_khz),
        overhead(overhead),
        close_truncated(close_truncated),
        any(std::move(any)) {}

  void AddHead(uint32_t tag, std::string head) {
    const uint32_t site = abi::TagSiteV1(tag);
    if (site < kDenseSites) {
      const size_t slot = 2 * size_t{site} + ((tag & abi::kExitFlag) != 0);
      if (dense.size() <= slot) dense.resize(slot + 1);
      dense[slot] = std::move(head);
    } else {
      sparse[tag] = std::move(head);
    }
  }
  const std::string& Head(uint32_t tag) const {
    const uint32_t site = abi::TagSiteV1(tag);
    if (site < kDenseSites) return dense[2 * size_t{site} + ((tag & abi::kExitFlag) != 0)];
    return sparse.find(site | (tag & abi::kExitFlag))->second;
  }

  // Writes the events of `traces` at the start of `out`, each after a ',' but the very first
  // of the array (`first`: these traces begin it), and returns how many bytes that took.
  // `out` only grows (in big steps, zero-filled once): reused, it costs no new pages.
  size_t Traces(const std::vector<abi::Event>& events, absl::Span<const Trace* const> traces,
                bool first, std::vector<uint8_t>& out) const {
    size_t used = 0;
    std::vector<uint32_t> open;  // tags of the regions open (close_truncated only)
    for (const Trace* t : traces) {
      const abi::Event* e = events.data() + t->first_event;
      char pid[24], tid[24];
      const llvm::StringRef ids[] = {
          llvm::StringRef(pid, std::to_chars(pid, pid + sizeof(pid), uint64_t{1} + t->sm_id).ptr -
                                   pid),
          llvm::StringRef(tid, std::to_chars(tid, tid + sizeof(tid),
                                             uint64_t{1} + t->mosaic_index).ptr - tid)};
      const std::string tail = any.Tail(1, ids);
      const bool close = close_truncated;
      open.clear();
      uint32_t last = 0;
      uint32_t at = 0;
      auto write = [&](const std::string& head) {
        const size_t at_most = 1 + head.size() + kFloatBytes + tail.size();
        if (out.size() < used + at_most) out.resize(std::max(2 * out.size(), used + at_most));
        char* const start = reinterpret_cast<char*>(out.data()) + used;
        char* p = start;
        if (!first) *p++ = ',';
        first = false;
        std::memcpy(p, head.data(), head.size());
        p = WritePythonFloat(p + head.size(), static_cast<double>(at) / 1e3);
        std::memcpy(p, tail.data(), tail.size());
        used += static_cast<size_t>(p + tail.size() - start);
      };
      for (uint32_t k = 0; k < t->event_count; ++k) {
        uint32_t time = e[k].clock - e[0].clock - k * overhead;
        if (k > 0 && last >= time) time = last + 1u;
        last = time;
        uint32_t ns = time;
        if (sm_clock_khz != 0) {
          ns = static_cast<uint32_t>(static_cast<uint64_t>(std::llround(
              static_cast<double>(time) * 1e6 / static_cast<double>(sm_clock_khz))));
        }
        at = t->start + ns;
        write(Head(e[k].tag));
        if (close) {
          if ((e[k].tag & abi::kExitFlag) == 0) {
            open.push_back(e[k].tag);
          } else if (!open.empty()) {
            open.pop_back();
          }
        }
      }
      // Mosaic's synthetic ends of the regions left open, at the trace's last ts.
      for (auto it = open.rbegin(); it != open.rend(); ++it) write(Head(*it | abi::kExitFlag));
    }
    return used;
  }

  static constexpr uint32_t kDenseSites = 1 << 16;
  static constexpr size_t kFloatBytes = 64;
  const uint64_t sm_clock_khz;
  const uint32_t overhead;
  const bool close_truncated;
  const EventTemplate any;
  std::vector<std::string> dense;                       // by 2 x site + exit
  absl::flat_hash_map<uint32_t, std::string> sparse;    // by tag, site >= kDenseSites
};

MosaicTraceSink::MosaicTraceSink(const MosaicTimestamps& options, llvm::raw_ostream& os,
                                 int threads)
    : options_(options), os_(os), threads_(threads) {}

absl::Status MosaicTraceSink::Begin(const TraceBegin& begin) {
  layout_ = begin.layout;
  traces_.clear();
  events_.clear();
  // At most every unit's capacity (the buffer's size): one allocation, whose pages are
  // touched only as events arrive, instead of a doubling vector's copies.
  events_.reserve(begin.units * uint64_t{layout_->capacity});
  names_.clear();
  for (const SiteInfo& site : layout_->sites) {
    names_[site.id] = ValidUtf8(site.name);
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

  // Each event is its site's text up to "ts" (json::OStream serialized it once, name
  // escaped), the ts, then its trace's pid and tid: the bytes json::OStream's compact
  // rawValue writes, with a ',' between events.
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
  Format format(options_.sm_clock_khz, overhead, options_.close_truncated,
                event_template("", "B"));
  for (const auto& [site, name] : names_) {
    format.AddHead(site, event_template(name, "B").piece(0));
    format.AddHead(site | abi::kExitFlag, event_template(name, "E").piece(0));
  }

  // Runs of whole traces of about kMosaicChunkEvents events: the pieces of work.
  std::vector<size_t> cuts = {0};
  uint64_t run = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    run += order[i]->event_count;
    if (run >= kMosaicChunkEvents) {
      cuts.push_back(i + 1);
      run = 0;
    }
  }
  if (cuts.back() != order.size()) cuts.push_back(order.size());
  auto format_run = [&](size_t piece, std::vector<uint8_t>& out) {
    const size_t bytes = format.Traces(
        events_, absl::MakeConstSpan(order).subspan(cuts[piece], cuts[piece + 1] - cuts[piece]),
        /*first=*/piece == 0, out);
    return absl::MakeConstSpan(out.data(), bytes);
  };

  os_ << R"({"displayTimeUnit":"ns","traceEvents":[)";
  if (threads_ <= 1) {
    std::vector<uint8_t> out;
    for (size_t piece = 0; piece + 1 < cuts.size(); ++piece) {
      const absl::Span<const uint8_t> bytes = format_run(piece, out);
      os_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  } else {
    // A job's bytes are its piece number; the workers format, then write in order.
    ChunkPipeline pipeline(
        threads_, 2 * static_cast<size_t>(threads_),
        [&](int, absl::Span<const uint8_t> in, std::vector<uint8_t>& out) {
          size_t piece = 0;
          std::memcpy(&piece, in.data(), sizeof(piece));
          return format_run(piece, out);
        },
        [&](absl::Span<const uint8_t> bytes) {
          os_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        });
    std::vector<uint8_t> job;
    for (size_t piece = 0; piece + 1 < cuts.size(); ++piece) {
      job.resize(sizeof(piece));
      std::memcpy(job.data(), &piece, sizeof(piece));
      pipeline.Submit(job, sizeof(piece));
    }
    pipeline.Drain();
  }
  os_ << "]}";
  return absl::OkStatus();
}

}  // namespace warptrace
