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
// ISA-L's igzip) of those packets as a `Trace` message — what Perfetto's own service writes with
// TraceConfig.compression_type = COMPRESSION_TYPE_DEFLATE, and what its trace processor (and
// so ui.perfetto.dev) expands in place before reading the packets inside. Memory stays one
// buffer and its deflated copy, whatever the trace's size.
//
// Threads. With `workers` >= 1, or with `on_queued` set, the full buffers go to a ChunkPipeline
// (base/chunk_pipeline.h): `workers` background threads, and any thread calling Help(),
// deflate them and write them to `os` in order, while the caller goes on encoding packets;
// with workers = 0 the caller deflates a buffer itself only when kHelpedInFlight wait. The
// bytes are the same as with workers = 0 and no on_queued (everything on the calling
// thread). Memory: a few buffers in flight, whatever the trace's size.
//
// Not thread-safe (one caller thread; Help and HasPending from any); `os` must outlive the PacketWriter and, while it lives,
// be written by nobody else until Flush returned.
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
#include "base/chunk_pipeline.h"
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
inline constexpr uint32_t kTrackEventTag = WireFormat::MakeTag(
    pb::TracePacket::kTrackEventFieldNumber, WireFormat::WIRETYPE_LENGTH_DELIMITED);

class PacketWriter {
 public:
  explicit PacketWriter(llvm::raw_ostream& os, bool compress = true, int workers = 0,
                        ChunkPipeline::OnQueued on_queued = nullptr);
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
  void WriteUnitEvent(uint64_t delta, const std::string& suffix) {
    const uint32_t body =
        static_cast<uint32_t>(1 + CodedOutputStream::VarintSize64(delta) + suffix.size());
    const size_t total = 1 + CodedOutputStream::VarintSize32(body) + body;
    if (total > kSlopBytes) {
      WriteLongUnitEvent(delta, body, suffix);
      return;
    }
    uint8_t* p = Reserve(kSlopBytes);
    uint8_t* const start = p;
    p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
    p = CodedOutputStream::WriteVarint32ToArray(body, p);
    p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
    p = CodedOutputStream::WriteVarint64ToArray(delta, p);
    if (suffix.size() <= kSuffixCopyBytes && suffix.capacity() >= kSuffixCopyBytes) {
      std::memcpy(p, suffix.data(), kSuffixCopyBytes);
    } else {
      std::memcpy(p, suffix.data(), suffix.size());
    }
    p += suffix.size();
    used_ += static_cast<size_t>(p - start);
    ++packets_;
  }

  // The sequence id, the TrackEvent field holding `event` and `extra` (more encoded packet
  // fields), as bytes: the suffix of a WriteUnitEvent packet, padded in capacity so that
  // WriteUnitEvent may copy kSuffixCopyBytes.
  static std::string UnitEventSuffix(const std::string& event, const std::string& extra);

  // Hands the buffered bytes to the stream (deflated, when compressing) and returns once the
  // stream has every byte written so far.
  void Flush();

  uint64_t packets() const { return packets_; }

  // Deflates and writes (when their turn has come) one full buffer on the calling thread;
  // false when none waits. Any thread, while the writer lives.
  bool Help() { return pipeline_ != nullptr && pipeline_->Help(); }
  // Whether a full buffer waits for a thread (Help would do something).
  bool HasPending() const { return pipeline_ != nullptr && pipeline_->HasPending(); }

 private:
  // Buffers in flight with helpers and no background worker: room for the helpers to fall
  // behind by a few buffers before the caller deflates one itself.
  static constexpr size_t kHelpedInFlight = 6;
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
  void WriteLongUnitEvent(uint64_t delta, uint32_t body, const std::string& suffix);
  // The buffer to the stream (or the pipeline), without waiting for it to be written.
  void FlushBuffer();
  // Whole packets to the stream: as they are, or as one compressed_packets packet.
  void Emit(const uint8_t* data, size_t size);
  // What Emit writes of `in`: `in` itself, or its compressed_packets packet in `out`.
  absl::Span<const uint8_t> Encode(int slot, absl::Span<const uint8_t> in,
                                   std::vector<uint8_t>& out);

  llvm::raw_ostream& os_;
  const bool compress_;
  struct Deflater;  // igzip's level buffer
  std::vector<std::unique_ptr<Deflater>> deflaters_;  // one per pipeline slot (or one), when compress_
  std::vector<uint8_t> deflated_;  // the compressed copy of one buffer (no workers)
  std::unique_ptr<ChunkPipeline> pipeline_;  // workers >= 1 or on_queued
  std::vector<uint8_t> buffer_;  // kBufferBytes + kSlopBytes
  size_t used_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PACKET_WRITER_H_
