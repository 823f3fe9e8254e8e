#include "tests/profiler/outputs/perfetto/perfetto_packets.h"

#include <zlib.h>

#include "gtest/gtest.h"

namespace warptrace {
namespace {

std::string Inflate(const std::string& deflated) {
  std::string out;
  z_stream z{};
  EXPECT_EQ(inflateInit(&z), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(deflated.data()));
  z.avail_in = static_cast<uInt>(deflated.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    char chunk[1 << 14];
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

}  // namespace

std::vector<perfetto::TracePacket> ReadPerfettoPackets(const std::string& bytes,
                                                       size_t* compressed) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  std::vector<perfetto::TracePacket> out;
  if (compressed != nullptr) *compressed = 0;
  for (const perfetto::TracePacket& outer : trace.packet()) {
    if (!outer.has_compressed_packets()) {
      out.push_back(outer);
      continue;
    }
    if (compressed != nullptr) ++*compressed;
    perfetto::Trace inner;
    EXPECT_TRUE(inner.ParseFromString(Inflate(outer.compressed_packets())));
    out.insert(out.end(), inner.packet().begin(), inner.packet().end());
  }
  return out;
}

}  // namespace warptrace
