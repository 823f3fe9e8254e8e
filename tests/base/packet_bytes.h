// PacketBytes: bytes shaped like a Perfetto writer's packet buffer (TracePackets of slice
// begins and ends on one sequence, each a delta timestamp and an interned name), for the
// Deflater's tests and benchmark. Deterministic for a seed.
#ifndef WARPTRACE_TESTS_BASE_PACKET_BYTES_H_
#define WARPTRACE_TESTS_BASE_PACKET_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace warptrace::testing {

inline void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

// `size` bytes: begin(name), end pairs nested two deep, timestamps 2-5 ns apart inside a
// region and 100-1000 ns between regions, as a loop's record points make.
inline std::vector<uint8_t> PacketBytes(uint32_t seed, size_t size) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out;
  std::vector<uint8_t> body;
  auto packet = [&](bool begin, uint32_t name, uint64_t delta) {
    body.clear();
    body.push_back(0x40);  // timestamp (delta on the sequence's incremental clock)
    PutVarint(body, delta);
    body.insert(body.end(), {0x50, 0x02, 0x5a});  // sequence 2; track_event
    if (begin) {
      body.insert(body.end(), {0x06, 0x18, 0x01, 0x48, 0x01, 0x50});  // category, type, name
      body.push_back(static_cast<uint8_t>(name));
    } else {
      body.insert(body.end(), {0x02, 0x48, 0x02});  // type: slice end
    }
    out.push_back(0x0a);  // Trace.packet
    PutVarint(out, body.size());
    out.insert(out.end(), body.begin(), body.end());
  };
  while (out.size() < size) {
    const uint32_t outer = 2 + rng() % 3;
    packet(true, outer, 100 + rng() % 900);
    for (int i = 0; i < 4; ++i) {
      packet(true, 5 + rng() % 2, 2 + rng() % 4);
      packet(false, 0, 2 + rng() % 4);
    }
    packet(false, 0, 2 + rng() % 4);
  }
  out.resize(size);
  return out;
}

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_BASE_PACKET_BYTES_H_
