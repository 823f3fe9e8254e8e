// The byte level of the Perfetto writer (perfetto_writer.h): TracePackets encoded into a
// buffer of the writer's own and handed to a raw_ostream in large pieces. Internal.
//
// The writer encodes with CodedOutputStream's *ToArray encoders and
// MessageLite::SerializeWithCachedSizesToArray: per event that is a handful of inlined
// stores, where a CodedOutputStream object costs a call into the library per field
// (measured: 2x slower overall). The hot path, WriteUnitEvent, is one packet of a
// timestamp delta and a pre-encoded suffix (sequence id, TrackEvent), inlined here.
//
// Compression (on by default): every buffer of whole packets (kBufferBytes) is written as one
// TracePacket whose only field is compressed_packets, the zlib-format deflated bytes (made by
// base/deflate.h's Deflater) of those packets as a `Trace` message — what Perfetto's own service writes with
// TraceConfig.compression_type = COMPRESSION_TYPE_DEFLATE, and what its trace processor (and
// so ui.perfetto.dev) expands in place before reading the packets inside. Memory stays one
// buffer and its deflated copy, whatever the trace's size.
//
// The Perfetto writer runs one PacketWriter per thread that formats (perfetto_writer.h), each
// deflating its own buffers. Not thread-safe; `os` must outlive the PacketWriter and be
// written by nobody else until Flush returned.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PACKET_WRITER_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PACKET_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "base/deflate.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"


namespace warptrace {
namespace perfetto_internal {

namespace pb = ::warptrace::perfetto;
using ::google::protobuf::io::CodedOutputStream;
using WireFormat = ::google::protobuf::internal::WireFormatLite;

inline constexpr uint32_t kPacketTag =
    WireFormat::MakeTag(pb::Trace::kPacketFieldNumber, WireFormat::WIRETYPE_LENGTH_DELIMITED);
inline constexpr uint32_t kTimestampTag =
    WireFormat::MakeTag(pb::TracePacket::kTimestampFieldNumber, WireFormat::WIRETYPE_VARINT);
static_assert(kPacketTag < 128 && kTimestampTag < 128, "one-byte tags");
inline constexpr uint32_t kTrackEventTag = WireFormat::MakeTag(
    pb::TracePacket::kTrackEventFieldNumber, WireFormat::WIRETYPE_LENGTH_DELIMITED);

class PacketWriter {
 public:
  explicit PacketWriter(llvm::raw_ostream& os, bool compress = true);
  ~PacketWriter();
  PacketWriter(const PacketWriter&) = delete;
  PacketWriter& operator=(const PacketWriter&) = delete;

  // A whole packet message: tag, length, the message's own serialization.
  void WritePacket(const pb::TracePacket& packet);

  // A TrackDescriptor packet on the track sequence (`descriptor` is moved from).
  void WriteDescriptor(pb::TrackDescriptor& descriptor);

  // A counter track's values from its +1/-1 changes: one value per distinct time, on the
  // track sequence with absolute clock-64 timestamps (a -1 and a +1 at one time net out).
  // Sorts `changes`.
  void WriteCounterTrack(uint64_t uuid, std::vector<std::pair<int64_t, int>>& changes);

  // The hot path: one packet on the unit sequence — the timestamp delta, then `suffix`
  // (UnitEventSuffix), copied as one fixed-size move when it is short.
  // Inlined into the writer's loop (measured: as a call, its prologue and the varint sizes'
  // dependency chain were a third of its time).
  __attribute__((always_inline)) void WriteUnitEvent(uint64_t delta, const std::string& suffix) {
    // Deltas are mostly one or two varint bytes; the packet and its body stay below 128.
    const size_t delta_bytes = delta < (uint64_t{1} << 7)    ? 1
                               : delta < (uint64_t{1} << 14) ? 2
                                                             : CodedOutputStream::VarintSize64(delta);
    const uint32_t body = static_cast<uint32_t>(1 + delta_bytes + suffix.size());
    if (body >= 128 || suffix.size() > kSuffixCopyBytes || suffix.capacity() < kSuffixCopyBytes) {
      WriteUnitEventSlow(delta, suffix);
      return;
    }
    uint8_t* p = Reserve(kSlopBytes);
    p[0] = static_cast<uint8_t>(kPacketTag);
    p[1] = static_cast<uint8_t>(body);
    p[2] = static_cast<uint8_t>(kTimestampTag);
    uint8_t* q = CodedOutputStream::WriteVarint64ToArray(delta, p + 3);
    std::memcpy(q, suffix.data(), kSuffixCopyBytes);
    used_ += static_cast<size_t>(q - p) + suffix.size();
    ++packets_;
  }

  // The sequence id, the TrackEvent field holding `event` and `extra` (more encoded packet
  // fields), as bytes: the suffix of a WriteUnitEvent packet, padded in capacity so that
  // WriteUnitEvent may copy kSuffixCopyBytes.
  static std::string UnitEventSuffix(const std::string& event, const std::string& extra);

  // Hands the buffered bytes to the stream (deflated, when compressing).
  void Flush() { FlushBuffer(); }

  uint64_t packets() const { return packets_; }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 18;
  // Room every hot-path packet fits in (Reserve's promise), and what a suffix copy may
  // over-read: suffixes are stored padded to it.
  static constexpr size_t kSlopBytes = 64;
  static constexpr size_t kSuffixCopyBytes = 16;

  // `n` bytes at the end of the buffer, flushing it first when they do not fit. n must be
  // at most kSlopBytes beyond kBufferBytes.
  uint8_t* Reserve(size_t n) {
    if (used_ + n > kBufferBytes) FlushBuffer();
    return buffer_.data() + used_;
  }
  // WriteUnitEvent's general case: a long suffix, or a packet of 128 bytes or more.
  void WriteUnitEventSlow(uint64_t delta, const std::string& suffix);
  // WriteUnitEventSlow's own slow path: a packet longer than kSlopBytes, written in pieces.
  void WriteOversizedUnitEventSlow(uint64_t delta, uint32_t body, const std::string& suffix);
  // The buffer to the stream.
  void FlushBuffer();
  // Whole packets to the stream: as they are, or as one compressed_packets packet.
  void Emit(const uint8_t* data, size_t size);
  // What Emit writes of `in`: `in` itself, or its compressed_packets packet in deflated_.
  absl::Span<const uint8_t> Encode(absl::Span<const uint8_t> in);

  llvm::raw_ostream& os_;
  const bool compress_;
  Deflater deflater_;                  // used when compress_
  // The compressed copy of one buffer (uninitialized: only what the deflater writes is
  // touched, a tenth or less of it for packets).
  std::unique_ptr<uint8_t[]> deflated_;
  size_t deflated_capacity_ = 0;
  std::vector<uint8_t> buffer_;  // kBufferBytes + kSlopBytes
  size_t used_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PACKET_WRITER_H_
