#include "profiler/outputs/pipeline_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "google/protobuf/io/coded_stream.h"
#include "llvm/Support/JSON.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/event_template.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/outputs/perfetto/perfetto_writer.h"

namespace warptrace {
namespace {

namespace pb = ::warptrace::perfetto;
using ::google::protobuf::io::CodedInputStream;
using ::google::protobuf::io::CodedOutputStream;

constexpr int64_t kPidsPerLaunch = int64_t{1} << 21;  // beyond "no record" (2^20)
constexpr uint64_t kFlowIdsPerLaunch = uint64_t{1} << 40;
constexpr uint64_t kUuidsPerLaunch = uint64_t{1} << 52;
constexpr uint32_t kSequencesPerLaunch = 16;

absl::Status CheckLaunches(absl::Span<const PipelineLaunchTimeline> launches) {
  if (launches.empty()) return absl::InvalidArgumentError("a pipeline trace needs launches");
  for (size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].timeline == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline launch ", i, " (",
                                                     launches[i].name, ") has no timeline"));
    }
  }
  return absl::OkStatus();
}

// Each launch's shift onto the pipeline's axis (see the header): its Timeline times plus
// shift[i] are nanoseconds after the pipeline's origin.
std::vector<int64_t> Shifts(absl::Span<const PipelineLaunchTimeline> launches) {
  bool anchored = true;
  for (const PipelineLaunchTimeline& l : launches) {
    anchored = anchored && l.timeline->layout.host_anchor.known;
  }
  std::vector<int64_t> start(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    const Timeline& t = *launches[i].timeline;
    const HostTimeAnchor& a = t.layout.host_anchor;
    start[i] = t.origin_ns + (anchored ? a.boottime_ns - a.globaltimer_ns : 0);
  }
  const int64_t origin = *std::min_element(start.begin(), start.end());
  for (int64_t& s : start) s -= origin;
  return start;
}

std::string LaunchLabel(size_t index, const PipelineLaunchTimeline& launch) {
  return absl::StrCat("launch ", index + 1, " ", ValidUtf8(launch.name));
}

// Microseconds with exactly three decimals, as the Chrome writer writes them.
std::string Micros(int64_t ns) {
  return absl::StrFormat("%s%d.%03d", ns < 0 ? "-" : "", std::abs(ns) / 1000,
                         std::abs(ns) % 1000);
}

int64_t Nanos(const llvm::json::Value& micros) {
  return static_cast<int64_t>(std::llround(micros.getAsNumber().getValueOr(0) * 1000.0));
}

// One of a launch's Chrome events, moved into the pipeline (see the header).
void WriteEvent(const llvm::json::Object& event, size_t launch, const std::string& label,
                int64_t shift, llvm::json::OStream& j) {
  const std::string ph = event.getString("ph").getValueOr("").str();
  const std::string name = event.getString("name").getValueOr("").str();
  j.object([&] {
    for (const auto& [key, value] : event) {
      const std::string k = key.str();
      if (k == "ts" || k == "dur") {
        j.attributeBegin(k);
        j.rawValue(Micros(Nanos(value) + (k == "ts" ? shift : 0)));
        j.attributeEnd();
      } else if (k == "pid" && value.getAsInteger().hasValue()) {
        j.attribute(k, static_cast<int64_t>(launch) * kPidsPerLaunch + *value.getAsInteger());
      } else if (k == "id" && (ph == "s" || ph == "f") && value.getAsUINT64().hasValue()) {
        j.attribute(k, launch * kFlowIdsPerLaunch + *value.getAsUINT64());
      } else if (k == "args" && ph == "M" && value.getAsObject() != nullptr) {
        llvm::json::Object args = *value.getAsObject();
        if (name == "process_name") {
          args["name"] = absl::StrCat(label, ": ", args.getString("name").getValueOr("").str());
        } else if (name == "process_sort_index") {
          args["sort_index"] = static_cast<int64_t>(launch) * kPidsPerLaunch +
                               args.getInteger("sort_index").getValueOr(0);
        }
        j.attribute(k, llvm::json::Value(std::move(args)));
      } else {
        j.attribute(k, value);
      }
    }
  });
}

// A launch's Perfetto packet, moved into the pipeline (see the header).
absl::Status RewritePacket(pb::TracePacket& p, size_t launch, const std::string& label) {
  const uint64_t uuids = launch * kUuidsPerLaunch;
  const uint64_t flows = launch * kFlowIdsPerLaunch;
  if (p.has_compressed_packets()) {
    return absl::InternalError("pipeline trace: a launch's packets are compressed");
  }
  if (p.has_trusted_packet_sequence_id()) {
    p.set_trusted_packet_sequence_id(p.trusted_packet_sequence_id() +
                                     kSequencesPerLaunch * static_cast<uint32_t>(launch));
  }
  if (p.has_track_descriptor()) {
    pb::TrackDescriptor& d = *p.mutable_track_descriptor();
    const bool root = d.uuid() == perfetto_internal::kRootUuid;
    if (d.has_uuid()) d.set_uuid(d.uuid() + uuids);
    if (d.has_parent_uuid()) d.set_parent_uuid(d.parent_uuid() + uuids);
    if (root) {
      d.set_name(absl::StrCat(label, ": ", d.name()));
      d.set_sibling_order_rank(static_cast<int32_t>(launch));
    }
  }
  if (p.has_track_event()) {
    pb::TrackEvent& e = *p.mutable_track_event();
    if (e.has_track_uuid()) e.set_track_uuid(e.track_uuid() + uuids);
    for (int i = 0; i < e.flow_ids_size(); ++i) e.set_flow_ids(i, e.flow_ids(i) + flows);
    for (int i = 0; i < e.terminating_flow_ids_size(); ++i) {
      e.set_terminating_flow_ids(i, e.terminating_flow_ids(i) + flows);
    }
  }
  if (p.has_trace_packet_defaults() &&
      p.trace_packet_defaults().has_track_event_defaults() &&
      p.trace_packet_defaults().track_event_defaults().has_track_uuid()) {
    pb::TrackEventDefaults& d =
        *p.mutable_trace_packet_defaults()->mutable_track_event_defaults();
    d.set_track_uuid(d.track_uuid() + uuids);
  }
  return absl::OkStatus();
}

// A launch's whole Perfetto trace, plain packets.
absl::StatusOr<std::string> LaunchPerfettoBytes(const Timeline& timeline) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  PerfettoWriterOptions options;
  options.compress = false;
  PerfettoWriter writer(os, options);
  RETURN_IF_ERROR(writer.Begin(timeline.layout, timeline.origin_ns));
  for (const UnitTimeline& unit : timeline.units) RETURN_IF_ERROR(writer.AddUnit(unit));
  RETURN_IF_ERROR(writer.End());
  os.flush();
  return bytes;
}

}  // namespace

absl::Status WritePipelineChromeTrace(absl::Span<const PipelineLaunchTimeline> launches,
                                      llvm::raw_ostream& os) {
  RETURN_IF_ERROR(CheckLaunches(launches));
  const std::vector<int64_t> shifts = Shifts(launches);
  std::vector<llvm::json::Value> traces;
  for (size_t i = 0; i < launches.size(); ++i) {
    std::string json;
    llvm::raw_string_ostream s(json);
    absl::Status written = WriteChromeTrace(*launches[i].timeline, ChromeTraceOptions{}, s);
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat(LaunchLabel(i, launches[i]), ": ",
                                                       written.message()));
    }
    s.flush();
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
    if (!parsed) {
      return absl::InternalError(absl::StrCat(LaunchLabel(i, launches[i]),
                                              ": its Chrome trace does not parse: ",
                                              llvm::toString(parsed.takeError())));
    }
    traces.push_back(std::move(*parsed));
  }
  AbandonableJson json(os);
  llvm::json::OStream& j = json.get();
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      for (size_t i = 0; i < traces.size(); ++i) {
        const llvm::json::Array* events =
            traces[i].getAsObject()->getArray("traceEvents");
        if (events == nullptr) continue;
        for (const llvm::json::Value& event : *events) {
          if (const llvm::json::Object* o = event.getAsObject()) {
            WriteEvent(*o, i, LaunchLabel(i, launches[i]), shifts[i], j);
          }
        }
      }
    });
    j.attributeObject("otherData", [&] {
      j.attribute("tool", "warptrace");
      j.attributeArray("pipeline", [&] {
        for (size_t i = 0; i < traces.size(); ++i) {
          j.object([&] {
            j.attribute("launch", static_cast<int64_t>(i + 1));
            j.attribute("name", ValidUtf8(launches[i].name));
            j.attribute("origin_ns", absl::StrCat(launches[i].timeline->origin_ns));
            j.attribute("offset_ns", shifts[i]);
            if (const llvm::json::Value* other = traces[i].getAsObject()->get("otherData")) {
              j.attribute("otherData", *other);
            }
          });
        }
      });
    });
  });
  json.MarkFinished();
  return absl::OkStatus();
}

absl::Status WritePipelineChromeTraceFile(absl::Span<const PipelineLaunchTimeline> launches,
                                          absl::string_view path) {
  return WriteFileAtomically(
      path, [&](llvm::raw_ostream& os) { return WritePipelineChromeTrace(launches, os); },
      {.role = "pipeline Chrome trace"});
}

absl::Status WritePipelinePerfettoTrace(absl::Span<const PipelineLaunchTimeline> launches,
                                        llvm::raw_ostream& os) {
  RETURN_IF_ERROR(CheckLaunches(launches));
  constexpr uint32_t kPacketTag = (1 << 3) | 2;  // Trace.packet, length-delimited
  for (size_t i = 0; i < launches.size(); ++i) {
    const std::string label = LaunchLabel(i, launches[i]);
    absl::StatusOr<std::string> bytes = LaunchPerfettoBytes(*launches[i].timeline);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat(label, ": ", bytes.status().message()));
    }
    CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes->data()),
                        static_cast<int>(bytes->size()));
    pb::TracePacket packet;
    std::string out;
    while (!in.ExpectAtEnd()) {
      uint32_t length = 0;
      if (in.ReadTag() != kPacketTag || !in.ReadVarint32(&length)) {
        return absl::InternalError(absl::StrCat(label, ": its Perfetto trace does not parse"));
      }
      const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
      if (!packet.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
        return absl::InternalError(absl::StrCat(label, ": a packet does not parse"));
      }
      in.PopLimit(limit);
      RETURN_IF_ERROR(RewritePacket(packet, i, label));
      out.clear();
      packet.SerializeToString(&out);
      uint8_t head[16];
      uint8_t* p = CodedOutputStream::WriteTagToArray(kPacketTag, head);
      p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(out.size()), p);
      os.write(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
      os << out;
    }
  }
  return absl::OkStatus();
}

absl::Status WritePipelinePerfettoTraceFile(absl::Span<const PipelineLaunchTimeline> launches,
                                            absl::string_view path) {
  return WriteFileAtomically(
      path, [&](llvm::raw_ostream& os) { return WritePipelinePerfettoTrace(launches, os); },
      {.role = "pipeline Perfetto trace"});
}

}  // namespace warptrace
