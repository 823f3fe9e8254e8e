#include "profiler/outputs/perfetto/packet_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>

#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

namespace {

// TracePacket.compressed_packets (Perfetto's trace_packet.proto).
constexpr uint32_t kCompressedPacketsTag = WireFormat::MakeTag(50, WireFormat::WIRETYPE_LENGTH_DELIMITED);

}  // namespace

struct PacketWriter::Deflater {
  z_stream stream{};
  bool ready = false;
  Deflater() {
    // Level 1: most of the ratio (the packets repeat a handful of shapes) at the least time.
    ready = deflateInit(&stream, Z_BEST_SPEED) == Z_OK;
  }
  ~Deflater() {
    if (ready) deflateEnd(&stream);
  }
};

PacketWriter::PacketWriter(llvm::raw_ostream& os, bool compress)
    : os_(os), compress_(compress), buffer_(kBufferBytes + kSlopBytes) {
  if (compress_) deflater_ = std::make_unique<Deflater>();
}

PacketWriter::~PacketWriter() = default;

void PacketWriter::Flush() {
  Emit(buffer_.data(), used_);
  used_ = 0;
}

void PacketWriter::Emit(const uint8_t* data, size_t size) {
  if (size == 0) return;
  if (compress_ && deflater_->ready) {
    EmitDeflated(data, size);
    return;
  }
  os_.write(reinterpret_cast<const char*>(data), size);
}

void PacketWriter::EmitDeflated(const uint8_t* data, size_t size) {
  z_stream& z = deflater_->stream;
  const size_t bound = deflateBound(&z, static_cast<uLong>(size));
  constexpr size_t kHead = 16;  // packet tag, two lengths and the field tag
  if (deflated_.size() < kHead + bound) deflated_.resize(kHead + bound);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = deflated_.data() + kHead;
  z.avail_out = static_cast<uInt>(bound);
  const int rc = deflate(&z, Z_FINISH);
  const size_t compressed = bound - z.avail_out;
  deflateReset(&z);
  if (rc != Z_STREAM_END) {  // cannot happen with deflateBound's room; stay readable anyway
    os_.write(reinterpret_cast<const char*>(data), size);
    return;
  }
  // Framing written backwards into the head room, right before the deflated bytes.
  uint8_t head[kHead];
  uint8_t* p = CodedOutputStream::WriteTagToArray(kCompressedPacketsTag, head);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(compressed), p);
  const size_t field_head = static_cast<size_t>(p - head);
  const uint32_t body = static_cast<uint32_t>(field_head + compressed);
  uint8_t outer[kHead];
  uint8_t* q = CodedOutputStream::WriteTagToArray(kPacketTag, outer);
  q = CodedOutputStream::WriteVarint32ToArray(body, q);
  const size_t outer_head = static_cast<size_t>(q - outer);
  uint8_t* start = deflated_.data() + kHead - field_head - outer_head;
  std::memcpy(start, outer, outer_head);
  std::memcpy(start + outer_head, head, field_head);
  os_.write(reinterpret_cast<const char*>(start), outer_head + field_head + compressed);
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
    Emit(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
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
  std::string bytes(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
  bytes += suffix;
  Flush();
  Emit(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ++packets_;
}

}  // namespace perfetto_internal
}  // namespace warptrace
