#include "profiler/outputs/perfetto/packet_writer.h"

#include <algorithm>

#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

void PacketWriter::Flush() {
  os_.write(reinterpret_cast<const char*>(buffer_.data()), used_);
  used_ = 0;
}

std::string PacketWriter::UnitEventSuffix(const std::string& event, const std::string& extra) {
  pb::TracePacket packet;
  packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
  std::string out = packet.SerializeAsString();
  uint8_t head[8];
  uint8_t* p = CodedOutputStream::WriteTagToArray(kTrackEventTag, head);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(event.size()), p);
  out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
  out += event;
  out += extra;
  out.reserve(std::max(out.size(), kSuffixCopyBytes));
  return out;
}

void PacketWriter::WritePacket(const pb::TracePacket& packet) {
  const size_t size = packet.ByteSizeLong();
  const size_t total = 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) + size;
  if (total > kBufferBytes) {  // a huge name: serialize on its own
    std::string bytes;
    bytes.push_back(static_cast<char>(kPacketTag));
    uint8_t length[8];
    bytes.append(reinterpret_cast<const char*>(length),
                 CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), length) -
                     length);
    packet.AppendToString(&bytes);
    Flush();
    os_.write(bytes.data(), bytes.size());
  } else {
    uint8_t* p = Reserve(total);
    p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
    p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p);
    packet.SerializeWithCachedSizesToArray(p);
    used_ += total;
  }
  ++packets_;
}

void PacketWriter::WriteDescriptor(pb::TrackDescriptor& descriptor) {
  pb::TracePacket packet;
  packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
  packet.mutable_track_descriptor()->Swap(&descriptor);
  WritePacket(packet);
}

void PacketWriter::WriteCounterTrack(uint64_t uuid,
                                     std::vector<std::pair<int64_t, int>>& changes) {
  std::sort(changes.begin(), changes.end());
  pb::TracePacket packet;
  packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
  pb::TrackEvent* event = packet.mutable_track_event();
  event->set_type(pb::TrackEvent::TYPE_COUNTER);
  event->set_track_uuid(uuid);
  int64_t value = 0;
  for (size_t i = 0; i < changes.size();) {
    const int64_t t = changes[i].first;
    for (; i < changes.size() && changes[i].first == t; ++i) value += changes[i].second;
    packet.set_timestamp(static_cast<uint64_t>(t));
    event->set_counter_value(value);
    WritePacket(packet);
  }
}

void PacketWriter::WriteLongUnitEvent(uint64_t delta, uint32_t body, const std::string& suffix) {
  uint8_t head[32];
  uint8_t* p = head;
  p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
  p = CodedOutputStream::WriteVarint32ToArray(body, p);
  p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
  p = CodedOutputStream::WriteVarint64ToArray(delta, p);
  Flush();
  os_.write(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
  os_.write(suffix.data(), suffix.size());
  ++packets_;
}

}  // namespace perfetto_internal
}  // namespace warptrace
