#include "profiler/outputs/perfetto/packet_writer.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

namespace {

// TracePacket.compressed_packets (Perfetto's trace_packet.proto).
constexpr uint32_t kCompressedPacketsTag = WireFormat::MakeTag(50, WireFormat::WIRETYPE_LENGTH_DELIMITED);

}  // namespace

// ISA-L's igzip (Debian's libisal-dev), level 1, zlib format, as Perfetto's service writes and
// its trace processor inflates with zlib. Measured on the 1e6-event Mosaic buffer's 13.0 MB
// of packets in 256 KiB pieces: 9-11 ms for 1.39 MB, where libdeflate's fastest level took
// 20-22 ms for 1.36 MB (zlib's level 1: 52 ms).
struct PacketWriter::Deflater {
  std::vector<uint8_t> level_buffer = std::vector<uint8_t>(ISAL_DEF_LVL1_DEFAULT);
};

PacketWriter::PacketWriter(llvm::raw_ostream& os, bool compress, int workers,
                           ChunkPipeline::OnQueued on_queued)
    : os_(os), compress_(compress), buffer_(kBufferBytes + kSlopBytes) {
  // Two buffers per worker in flight: every worker busy while the caller fills the next.
  const size_t in_flight = workers >= 1 ? 2 * static_cast<size_t>(workers) : kHelpedInFlight;
  const bool pipelined = workers >= 1 || on_queued != nullptr;
  if (compress_) {
    for (size_t slot = 0; slot < (pipelined ? in_flight : 1); ++slot) {
      deflaters_.push_back(std::make_unique<Deflater>());
    }
  }
  if (pipelined) {
    pipeline_ = std::make_unique<ChunkPipeline>(
        std::max(workers, 0), in_flight,
        [this](int slot, absl::Span<const uint8_t> in, std::vector<uint8_t>& out) {
          return Encode(slot, in, out);
        },
        [this](absl::Span<const uint8_t> bytes) {
          os_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        },
        std::move(on_queued));
  }
}

PacketWriter::~PacketWriter() = default;

void PacketWriter::Flush() {
  FlushBuffer();
  if (pipeline_ != nullptr) pipeline_->Drain();
}

void PacketWriter::FlushBuffer() {
  Emit(buffer_.data(), used_);
  used_ = 0;
}

void PacketWriter::Emit(const uint8_t* data, size_t size) {
  if (size == 0) return;
  if (pipeline_ == nullptr) {
    const absl::Span<const uint8_t> bytes = Encode(0, absl::MakeConstSpan(data, size), deflated_);
    os_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return;
  }
  if (data == buffer_.data()) {
    // The buffer itself goes to the workers; a recycled one takes its place.
    pipeline_->Submit(buffer_, size);
    if (buffer_.size() < kBufferBytes + kSlopBytes) buffer_.resize(kBufferBytes + kSlopBytes);
    return;
  }
  std::vector<uint8_t> copy(data, data + size);
  pipeline_->Submit(copy, size);
}

absl::Span<const uint8_t> PacketWriter::Encode(int slot, absl::Span<const uint8_t> in,
                                               std::vector<uint8_t>& out) {
  if (!compress_) return in;
  Deflater& deflater = *deflaters_[static_cast<size_t>(slot)];
  // Room for incompressible bytes: stored blocks, the zlib header and trailer.
  const size_t bound = in.size() + in.size() / 16 + 1024;
  constexpr size_t kHead = 16;  // packet tag, two lengths and the field tag
  if (out.size() < kHead + bound) out.resize(kHead + bound);
  // Zeroed first: isal_deflate_stateless_init leaves hist_bits (the window; 0 is the full
  // 32 KiB) and parts of the internal state as the stack had them, which changed the output
  // (found by the thread-count byte comparison: one 256 KiB buffer of a trace deflated to
  // 169 KB on one thread, 48 KB on another).
  isal_zstream stream;
  std::memset(&stream, 0, sizeof(stream));
  isal_deflate_stateless_init(&stream);
  stream.level = 1;
  stream.level_buf = deflater.level_buffer.data();
  stream.level_buf_size = static_cast<uint32_t>(deflater.level_buffer.size());
  stream.gzip_flag = IGZIP_ZLIB;
  stream.end_of_stream = 1;
  stream.flush = NO_FLUSH;
  stream.next_in = const_cast<uint8_t*>(in.data());
  stream.avail_in = static_cast<uint32_t>(in.size());
  stream.next_out = out.data() + kHead;
  stream.avail_out = static_cast<uint32_t>(bound);
  // Cannot fail with the bound's room; stay readable anyway (the packets as they are).
  if (isal_deflate_stateless(&stream) != COMP_OK) return in;
  const size_t compressed = stream.total_out;
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
  uint8_t* start = out.data() + kHead - field_head - outer_head;
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

void PacketWriter::WriteLongUnitEvent(uint64_t delta, uint32_t body, const std::string& suffix) {
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
