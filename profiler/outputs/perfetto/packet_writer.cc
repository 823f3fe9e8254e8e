#include "profiler/outputs/perfetto/packet_writer.h"

#include <algorithm>
#include <utility>

#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

namespace {

// TracePacket.compressed_packets (Perfetto's trace_packet.proto).
constexpr uint32_t kCompressedPacketsTag = WireFormat::MakeTag(50, WireFormat::WIRETYPE_LENGTH_DELIMITED);

}  // namespace

// Deflater (base/deflate.h), zlib format, as Perfetto's service writes and its trace
// processor inflates with zlib. Its output is a function of the input alone, which
// --threads=1 and --threads=N writing the same bytes rests on (ISA-L's igzip, used before
// libdeflate and Deflater, was not: deflate.h).
PacketWriter::PacketWriter(llvm::raw_ostream& os, bool compress)
    : os_(os), compress_(compress), buffer_(kBufferBytes + kSlopBytes) {}

PacketWriter::~PacketWriter() = default;

void PacketWriter::FlushBuffer() {
  Emit(buffer_.data(), used_);
  used_ = 0;
}

void PacketWriter::Emit(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const absl::Span<const uint8_t> bytes = Encode(absl::MakeConstSpan(data, size));
  os_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

absl::Span<const uint8_t> PacketWriter::Encode(absl::Span<const uint8_t> in) {
  if (!compress_) return in;
  constexpr size_t kHead = 16;  // packet tag, two lengths and the field tag
  const size_t bound = Deflater::Bound(in.size());
  if (deflated_capacity_ < kHead + bound) {
    deflated_.reset(new uint8_t[kHead + bound]);  // NOLINT: uninitialized, touched as written
    deflated_capacity_ = kHead + bound;
  }
  uint8_t* const out = deflated_.get();
  const size_t compressed = deflater_.Compress(in, out + kHead);
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
  uint8_t* start = out + kHead - field_head - outer_head;
  std::memcpy(start, outer, outer_head);
  std::memcpy(start + outer_head, head, field_head);
  return absl::MakeConstSpan(start, outer_head + field_head + compressed);
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
    FlushBuffer();
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

void PacketWriter::WriteUnitEventSlow(uint64_t delta, const std::string& suffix) {
  const uint32_t body =
      static_cast<uint32_t>(1 + CodedOutputStream::VarintSize64(delta) + suffix.size());
  const size_t total = 1 + CodedOutputStream::VarintSize32(body) + body;
  if (total > kSlopBytes) {
    WriteOversizedUnitEventSlow(delta, body, suffix);
    return;
  }
  uint8_t* p = Reserve(kSlopBytes);
  uint8_t* const start = p;
  p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
  p = CodedOutputStream::WriteVarint32ToArray(body, p);
  p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
  p = CodedOutputStream::WriteVarint64ToArray(delta, p);
  std::memcpy(p, suffix.data(), suffix.size());
  p += suffix.size();
  used_ += static_cast<size_t>(p - start);
  ++packets_;
}

void PacketWriter::WriteOversizedUnitEventSlow(uint64_t delta, uint32_t body, const std::string& suffix) {
  uint8_t head[32];
  uint8_t* p = head;
  p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
  p = CodedOutputStream::WriteVarint32ToArray(body, p);
  p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
  p = CodedOutputStream::WriteVarint64ToArray(delta, p);
  std::string bytes(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
  bytes += suffix;
  FlushBuffer();
  Emit(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ++packets_;
}

}  // namespace perfetto_internal
}  // namespace warptrace
