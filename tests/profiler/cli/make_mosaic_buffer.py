#!/usr/bin/env python3
"""Writes a synthetic JAX Mosaic GPU profiler buffer (PREFIX.bin + PREFIX.json) for timing
`warptrace dump` on a Mosaic-sized trace (see profiler/imports/mosaic_import.h for the format).

    python3 tests/profiler/cli/make_mosaic_buffer.py PREFIX [EVENTS]

Each trace (one warpgroup, two per 256-thread block, on SM block % 132) records a kernel
region around ITERATIONS x {mainloop {load, mma}}: 2 + 6 * ITERATIONS events, with cycle
gaps that vary per trace and iteration. EVENTS (default 1,000,000) is rounded to whole
traces. Deterministic.
"""
import json
import struct
import sys

ITERATIONS = 40
NAMES = ["kernel", "mainloop", "load", "mma"]


def trace_words(index, start_lo):
    events = []
    clock = (0xFFF00000 + index * 7919) & 0xFFFFFFFF

    def event(site, exit_, gap):
        nonlocal clock
        clock = (clock + gap) & 0xFFFFFFFF
        events.extend([site | (1 << 31 if exit_ else 0), clock])

    event(0, False, 40)
    for i in range(ITERATIONS):
        event(1, False, 8)
        event(2, False, 4)
        event(2, True, 300 + (index * 13 + i * 7) % 200)
        event(3, False, 6)
        event(3, True, 1000 + (index * 29 + i * 11) % 700)
        event(1, True, 5)
    event(0, True, 12)
    return [start_lo, index // 2 % 132, len(events)] + events


def main():
    prefix = sys.argv[1]
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    per_trace = 2 + 6 * ITERATIONS
    traces = max(2, (wanted + per_trace - 1) // per_trace)
    traces += traces % 2
    entries = 3 + 2 * per_trace
    words = []
    for t in range(traces):
        words += trace_words(t, (1_000_000_000 + (t // 2) * 150) & 0xFFFFFFFF)
    with open(prefix + ".bin", "wb") as f:
        f.write(struct.pack("<%dI" % len(words), *words))
    with open(prefix + ".json", "w") as f:
        json.dump({"format": "mosaic-gpu", "grid": [traces // 2, 1, 1], "block": [256, 1, 1],
                   "entries_per_warpgroup": entries, "trace_scope": "warpgroup",
                   "names": NAMES, "kernel_name": "mosaic_synthetic"}, f)
    print(f"{prefix}.bin: {traces} traces x {per_trace} events = {traces * per_trace} events")


if __name__ == "__main__":
    main()
