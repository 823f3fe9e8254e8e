// Test helper: the packets of a Perfetto trace as Perfetto's trace processor reads them, each
// compressed_packets packet inflated (zlib) and its packets read in its place.
#ifndef WARPTRACE_TESTS_PROFILER_OUTPUTS_PERFETTO_PERFETTO_PACKETS_H_
#define WARPTRACE_TESTS_PROFILER_OUTPUTS_PERFETTO_PERFETTO_PACKETS_H_

#include <string>
#include <vector>

#include "profiler/outputs/perfetto/perfetto_trace.pb.h"

namespace warptrace {

// Adds a gtest failure when the bytes do not parse or a compressed packet does not inflate.
// `compressed` (optional): set to the number of top-level compressed_packets packets.
std::vector<perfetto::TracePacket> ReadPerfettoPackets(const std::string& bytes,
                                                       size_t* compressed = nullptr);

}  // namespace warptrace

#endif  // WARPTRACE_TESTS_PROFILER_OUTPUTS_PERFETTO_PERFETTO_PACKETS_H_
