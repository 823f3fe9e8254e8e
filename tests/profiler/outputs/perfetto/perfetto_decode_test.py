"""Reads warptrace's Perfetto output back with Perfetto's own published schema.

The decoder is PyPI's `perfetto` package (perfetto_trace_pb2, generated from Perfetto's
perfetto_trace.proto) on the `protobuf` runtime: it shares no code with the C++ writer, so it
checks the field numbers and wire format as well as the meaning. tools/setup.sh installs
both; a missing package fails this test (it never skips).

The trace is interpreted the way Perfetto's trace processor does: a packet of
compressed_packets is inflated (zlib) and the packets inside it read in its place; per packet
sequence, the
incremental state (interned names and categories, TracePacketDefaults) is cleared by
SEQ_INCREMENTAL_STATE_CLEARED, sequence-scoped clock 64 is declared by clock snapshots
(incremental: each timestamp is a delta from the previous packet's; the first one after a
snapshot from the snapshot's value) and converted to CLOCK_BOOTTIME through the snapshot.

Usage (Bazel passes it): perfetto_decode_test.py WRITE_FIXTURE_TRACES_BINARY
"""

import collections
import json
import re
import os
import subprocess
import sys
import tempfile
import unittest
import zlib

from google.protobuf import __version__ as protobuf_version  # noqa: F401 (fails loudly)
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BOOTTIME = pb.BUILTIN_CLOCK_BOOTTIME
REALTIME = pb.BUILTIN_CLOCK_REALTIME
TE = pb.TrackEvent
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED

# The writer's fixed ids (profiler/outputs/perfetto/perfetto_writer.h).
GPU_CLOCK = 64
# What write_fixture_traces.cc puts in the "anchored" layout.
ANCHOR_GPU_NS = 5_000_000
ANCHOR_BOOT_NS = 86_400_000_000_000
ANCHOR_REAL_NS = 1_764_500_000_000_000_000


class Sequence:
    def __init__(self):
        self.names = {}
        self.categories = {}
        self.annotation_names = {}
        self.defaults = None
        self.cleared = False
        self.clears = 0               # packets that cleared the incremental state
        self.clock_last = None        # incremental clock 64: previous timestamp
        self.clock_incremental = False
        self.to_boot = None           # boottime - clock 64


class DecodedTrace:
    """Everything the checks need, resolved through interning and clocks."""

    def __init__(self, data):
        trace = pb.Trace()
        trace.ParseFromString(data)
        packets = []
        self.compressed = 0                                # top-level compressed_packets
        self.uncompressed = 0                              # other top-level packets
        for packet in trace.packet:
            if packet.HasField("compressed_packets"):
                self.compressed += 1
                if packet.ListFields() != [(pb.TracePacket.DESCRIPTOR.fields_by_name[
                        "compressed_packets"], packet.compressed_packets)]:
                    self.problems_early = "compressed_packets beside other fields"
                inner = pb.Trace()
                inner.ParseFromString(zlib.decompress(packet.compressed_packets))
                packets.extend(inner.packet)
            else:
                self.uncompressed += 1
                packets.append(packet)
        self.packets = len(packets)
        self.tracks = {}                                   # uuid -> TrackDescriptor
        self.slices = collections.defaultdict(list)        # uuid -> [(name, cat, b, e, args)]
        self.instants = collections.defaultdict(list)      # uuid -> [(name, t, args)]
        self.counters = collections.defaultdict(list)      # uuid -> [(t, value)]
        # Flow arrows as trace processor joins them: id -> {"from": (uuid, slice),
        # "to": (uuid, slice)}, a slice being [name, cats, begin, end, args] (an instant's
        # end is its begin).
        self.flows = {}
        self.flow_events = []                              # (time, terminating, id, uuid, s)
        self.snapshots = []                                 # [{clock_id: timestamp}]
        self.snapshot_series = {}                           # clock set -> last timestamps
        self.seq_id = 0
        self.problems = []
        self.sequences = collections.defaultdict(Sequence)
        self.open = collections.defaultdict(list)          # uuid -> stack of open slices
        self.last_time = {}                                 # uuid -> last event time
        if getattr(self, "problems_early", None):
            self.problems.append(self.problems_early)
        for packet in packets:
            self._packet(packet)
        self._join_flows()
        for uuid, stack in self.open.items():
            if stack:
                self.problems.append(f"track {uuid}: {len(stack)} slices never end")

    def _packet(self, p):
        if not p.HasField("trusted_packet_sequence_id"):
            self.problems.append("packet without trusted_packet_sequence_id")
            return
        seq = self.sequences[p.trusted_packet_sequence_id]
        self.seq_id = p.trusted_packet_sequence_id
        if p.sequence_flags & CLEARED or p.incremental_state_cleared:
            seq.names, seq.categories, seq.annotation_names = {}, {}, {}
            seq.defaults = None
            seq.cleared = True
            seq.clears += 1
        if p.HasField("trace_packet_defaults"):
            seq.defaults = p.trace_packet_defaults
        if p.HasField("interned_data"):
            if not seq.cleared:
                self.problems.append("interned data before the sequence was cleared")
            for n in p.interned_data.event_names:
                seq.names[n.iid] = n.name
            for c in p.interned_data.event_categories:
                seq.categories[c.iid] = c.name
            for n in p.interned_data.debug_annotation_names:
                seq.annotation_names[n.iid] = n.name
        if p.HasField("clock_snapshot"):
            self._snapshot(seq, p.clock_snapshot)
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.uuid in self.tracks:
                self.problems.append(f"track {d.uuid} declared twice")
            self.tracks[d.uuid] = d
        if p.HasField("track_event"):
            self._event(seq, p)

    def _snapshot(self, seq, snapshot):
        clocks = {c.clock_id: c for c in snapshot.clocks}
        self.snapshots.append({c.clock_id: c.timestamp for c in snapshot.clocks})
        # Trace processor keeps one series per set of clocks (sequence clocks are per
        # sequence) and rejects a snapshot whose trace clock (BOOTTIME) goes back; a
        # sequence clock that goes back can no longer be converted from.
        key = tuple(sorted((c, self.seq_id if c >= 64 else 0) for c in clocks))
        last = self.snapshot_series.setdefault(key, {})
        for clock_id, c in clocks.items():
            if clock_id in last and c.timestamp < last[clock_id] and (
                    clock_id == BOOTTIME or clock_id >= 64):
                self.problems.append(
                    f"clock {clock_id} goes back in snapshots: {last[clock_id]} -> {c.timestamp}")
            last[clock_id] = c.timestamp
        if GPU_CLOCK in clocks:
            gpu = clocks[GPU_CLOCK]
            if BOOTTIME not in clocks:
                self.problems.append("clock 64 snapshot without BOOTTIME")
                return
            offset = clocks[BOOTTIME].timestamp - gpu.timestamp
            if seq.to_boot is not None and seq.to_boot != offset:
                self.problems.append(f"clock 64 offset changed: {seq.to_boot} -> {offset}")
            seq.to_boot = offset
            seq.clock_incremental = gpu.is_incremental
            seq.clock_last = gpu.timestamp

    def _time(self, seq, p):
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (
            seq.defaults.timestamp_clock_id
            if seq.defaults is not None and seq.defaults.HasField("timestamp_clock_id")
            else BOOTTIME)
        if clock == BOOTTIME:
            return p.timestamp
        if clock != GPU_CLOCK or seq.to_boot is None:
            self.problems.append(f"timestamp on undeclared clock {clock}")
            return p.timestamp
        t = p.timestamp
        if seq.clock_incremental:
            t = seq.clock_last + p.timestamp
            seq.clock_last = t
        return t + seq.to_boot

    def _event(self, seq, p):
        e = p.track_event
        t = self._time(seq, p)
        if e.HasField("track_uuid"):
            uuid = e.track_uuid
        elif seq.defaults is not None and seq.defaults.track_event_defaults.HasField("track_uuid"):
            uuid = seq.defaults.track_event_defaults.track_uuid
        else:
            self.problems.append("track event without a track")
            return
        if uuid not in self.tracks:
            self.problems.append(f"event on track {uuid} before its descriptor")
        if t < self.last_time.get(uuid, t):
            self.problems.append(f"track {uuid}: time goes back to {t}")
        self.last_time[uuid] = t
        name = None
        if e.HasField("name_iid"):
            name = seq.names.get(e.name_iid)
            if name is None:
                self.problems.append(f"name iid {e.name_iid} not interned")
        elif e.HasField("name"):
            name = e.name
        cats = [seq.categories.get(i, f"?{i}") for i in e.category_iids] + list(e.categories)
        args = {}
        for a in e.debug_annotations:
            key = a.name if a.HasField("name") else seq.annotation_names.get(a.name_iid, "?")
            args[key] = getattr(a, a.WhichOneof("value"))
        if e.type == TE.TYPE_SLICE_BEGIN:
            s = [name, cats, t, None, args]
            self.open[uuid].append(s)
        elif e.type == TE.TYPE_SLICE_END:
            if not self.open[uuid]:
                self.problems.append(f"track {uuid}: end without begin at {t}")
                return
            s = self.open[uuid].pop()
            s[3] = t
            self.slices[uuid].append(tuple(s[:2]) + (s[2], t, s[4]))
        elif e.type == TE.TYPE_INSTANT:
            self.instants[uuid].append((name, t, args))
            s = [name, cats, t, t, args]
        elif e.type == TE.TYPE_COUNTER:
            self.counters[uuid].append((t, e.counter_value))
        else:
            self.problems.append(f"unexpected event type {e.type}")
        if e.type != TE.TYPE_COUNTER:
            self._flows(e, t, uuid, s)

    def _flows(self, e, t, uuid, s):
        # Trace processor sorts events by time before it joins flows: a flow id on an event
        # starts the flow at its slice (or steps it when it is already open); a terminating
        # id ends an open flow there. Joined in _join_flows, in time order.
        for fid in e.flow_ids:
            self.flow_events.append((t, 0, fid, uuid, s))
        for fid in e.terminating_flow_ids:
            self.flow_events.append((t, 1, fid, uuid, s))

    def _join_flows(self):
        for t, terminating, fid, uuid, s in sorted(self.flow_events, key=lambda f: f[:2]):
            if not terminating:
                if fid in self.flows:
                    self.problems.append(f"flow {fid} started twice (a step)")
                    continue
                self.flows[fid] = {"from": (uuid, s), "to": None}
                continue
            if fid not in self.flows:
                self.problems.append(f"flow {fid} terminates before it starts")
                continue
            if self.flows[fid]["to"] is not None:
                self.problems.append(f"flow {fid} terminates twice")
            self.flows[fid]["to"] = (uuid, s)


def micros_to_ns(value):
    text = f"{value:.3f}"
    whole, frac = text.split(".")
    return int(whole) * 1000 + int(frac)


class JsonTrace:
    """The Chrome trace of the same buffer: slices per thread name, SM per thread."""

    def __init__(self, data):
        doc = json.loads(data)
        self.other = doc["otherData"]
        names, processes = {}, {}
        for ev in doc["traceEvents"]:
            if ev.get("ph") == "M" and ev["name"] == "thread_name":
                names[(ev["pid"], ev["tid"])] = ev["args"]["name"]
            if ev.get("ph") == "M" and ev["name"] == "process_name":
                processes[ev["pid"]] = ev["args"]["name"]
        # Unit threads only: a unit's async lanes ("<unit> async", "<unit> async 2") are
        # threads of their own in the Chrome trace, child tracks of the unit in Perfetto.
        self.threads = {name: processes[pid] for (pid, _), name in names.items()
                        if not re.search(r" async( \d+)?$", name)}
        self.slices = collections.defaultdict(list)
        for ev in doc["traceEvents"]:
            if ev.get("ph") == "X":
                b = micros_to_ns(ev["ts"])
                self.slices[names[(ev["pid"], ev["tid"])]].append(
                    (ev["name"], ev["cat"], b, b + micros_to_ns(ev["dur"])))


class PerfettoOutputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        subprocess.run([sys.argv[1], cls.dir], check=True)
        cls.traces = {}
        with open(os.path.join(cls.dir, "handoffs.expect.json")) as f:
            cls.expect = json.load(f)
        for name in ("plain", "anchored", "damaged", "handoffs", "batched"):
            with open(os.path.join(cls.dir, name + ".pftrace"), "rb") as f:
                perfetto = DecodedTrace(f.read())
            with open(os.path.join(cls.dir, name + ".json")) as f:
                chrome = JsonTrace(f.read())
            cls.traces[name] = (perfetto, chrome)

    def unit_tracks(self, perfetto):
        return {u: d for u, d in perfetto.tracks.items() if d.name.startswith("block ")}

    @staticmethod
    def block_of(perfetto, uuid):
        """The "block (x,y,z)" of a unit track or of an async lane under one."""
        d = perfetto.tracks[uuid]
        if d.name.startswith("async "):
            d = perfetto.tracks[d.parent_uuid]
        return d.name[:d.name.index(")") + 1]

    def test_the_trace_decodes_with_no_problem(self):
        for name, (perfetto, _) in self.traces.items():
            self.assertEqual(perfetto.problems, [], name)
            self.assertGreater(perfetto.packets, 100, name)

    def test_every_track_has_a_declared_parent_kernel_then_sm_then_unit(self):
        for name, (perfetto, chrome) in self.traces.items():
            roots = [d for d in perfetto.tracks.values() if not d.HasField("parent_uuid")]
            self.assertEqual(len(roots), 1, name)
            root = roots[0]
            self.assertIn("pipeline" if name == "handoffs" else "synthetic_gemm", root.name)
            for d in perfetto.tracks.values():
                if d is root:
                    continue
                self.assertIn(d.parent_uuid, perfetto.tracks, f"{name}: {d.name}")
                parent = perfetto.tracks[d.parent_uuid]
                if d.name.startswith("SM ") or d.name == "no record":
                    self.assertIs(parent, root, d.name)
                elif d.name.startswith("block "):
                    # The unit's SM is the Chrome trace's process of the same thread.
                    self.assertEqual(parent.name, chrome.threads[d.name], d.name)
                elif d.name.startswith("async "):
                    self.assertTrue(parent.name.startswith("block "), d.name)
                elif " stages ready in block " in d.name:
                    # A block's stage-ring counter sits under the SM its units ran on.
                    block = d.name[d.name.index("block "):]
                    sms = {sm for thread, sm in chrome.threads.items()
                           if thread.startswith(block + " ")}
                    self.assertEqual(sms, {parent.name}, d.name)
                    self.assertTrue(d.HasField("counter"))
                else:
                    self.assertEqual(d.name, "active units")
                    self.assertTrue(parent.name.startswith("SM "))
                    self.assertTrue(d.HasField("counter"))
            self.assertEqual(set(self.unit_tracks(perfetto)[u].name
                                 for u in self.unit_tracks(perfetto)), set(chrome.threads))

    def test_units_are_ordered_like_the_chrome_sort_index(self):
        perfetto, _ = self.traces["plain"]
        ranks = sorted((d.sibling_order_rank, d.name) for d in self.unit_tracks(perfetto).values())
        self.assertEqual(ranks[0][1], "block (0,0,0) warpgroup 0")
        self.assertEqual(ranks[1][1], "block (0,0,0) warpgroup 1")
        self.assertEqual(ranks[2][1], "block (1,0,0) warpgroup 0")

    def test_slices_are_the_json_slices_names_and_times(self):
        for name in ("plain", "damaged", "handoffs", "batched"):
            perfetto, chrome = self.traces[name]
            tracks = self.unit_tracks(perfetto)
            total = 0
            for uuid, d in tracks.items():
                got = sorted((n, c[0], b, e) for n, c, b, e, _ in perfetto.slices[uuid])
                want = sorted(chrome.slices[d.name])
                self.assertEqual(got, want, f"{name}: {d.name}")
                total += len(got)
            self.assertEqual(total, chrome.other["slices"], name)
            self.assertGreater(total, 0)

    def test_slices_nest_on_every_track(self):
        perfetto, _ = self.traces["plain"]
        for uuid, slices in perfetto.slices.items():
            # Completed in end order: a slice that began inside another ends first, inside it.
            spans = sorted((b, -e) for _, _, b, e, _ in slices)
            stack = []
            for b, neg_e in spans:
                e = -neg_e
                while stack and stack[-1] <= b and not (stack[-1] == b and e == b):
                    stack.pop()
                if stack:
                    self.assertLessEqual(e, stack[-1], f"track {uuid}: slice sticks out")
                stack.append(e)

    def test_names_and_site_annotations_come_through_interning(self):
        perfetto, _ = self.traces["plain"]
        names = collections.Counter(n for s in perfetto.slices.values() for n, *_ in s)
        self.assertEqual(set(names), {"kernel", "mainloop", "load", "mma"})
        self.assertEqual(names["load"], names["mma"])
        first_load = [a for s in perfetto.slices.values() for n, _, _, _, a in s
                      if n == "load" and a]
        self.assertEqual(first_load[0], {"site": 2, "kind": "region", "origin": "fixture.cc:3"})
        # Once per trace, not once per unit.
        self.assertEqual(len(first_load), 1)
        self.assertGreater(len(self.unit_tracks(perfetto)), 1)
        # What the lean JSON lists once per site.
        _, chrome = self.traces["plain"]
        site = chrome.other["sites"][2]
        self.assertEqual(first_load[0], {"site": site["id"], "kind": site["kind"],
                                         "origin": site["origin"]})

    def test_without_anchor_time_zero_is_the_origin(self):
        perfetto, chrome = self.traces["plain"]
        first = min(b for s in perfetto.slices.values() for _, _, b, _, _ in s)
        self.assertEqual(first, min(b for s in chrome.slices.values() for _, _, b, _ in s))
        self.assertEqual(perfetto.snapshots[0][BOOTTIME], 0)
        self.assertNotIn(REALTIME, perfetto.snapshots[0])

    def test_anchor_maps_gpu_time_to_boottime_and_realtime(self):
        anchored, chrome = self.traces["anchored"]
        plain, _ = self.traces["plain"]
        origin = int(chrome.other["origin_ns"])
        # The JSON of the same dump carries the same anchor.
        anchor = chrome.other["host_anchor"]
        self.assertEqual(int(anchor["globaltimer_ns"]), ANCHOR_GPU_NS)
        self.assertEqual(int(anchor["boottime_ns"]), ANCHOR_BOOT_NS)
        self.assertEqual(int(anchor["realtime_ns"]), ANCHOR_REAL_NS)
        self.assertNotIn("host_anchor", plain_other := self.traces["plain"][1].other)
        self.assertEqual(plain_other["slice_args"], "lean")
        first = self.traces["anchored"][0].snapshots[0]
        self.assertEqual(first[GPU_CLOCK], ANCHOR_GPU_NS)
        self.assertEqual(first[BOOTTIME], ANCHOR_BOOT_NS)
        self.assertEqual(first[REALTIME], ANCHOR_REAL_NS)
        shift = origin + ANCHOR_BOOT_NS - ANCHOR_GPU_NS
        for uuid, slices in plain.slices.items():
            moved = [(n, b + shift, e + shift) for n, _, b, e, _ in slices]
            self.assertEqual([(n, b, e) for n, _, b, e, _ in anchored.slices[uuid]], moved)

    def test_incomplete_units_say_so_in_track_name_and_instant(self):
        perfetto, chrome = self.traces["damaged"]
        verdicts = {}
        for uuid, d in self.unit_tracks(perfetto).items():
            if "[" in d.name:
                verdict = d.name[d.name.index("[") + 1:-1]
                instants = perfetto.instants[uuid]
                self.assertEqual(len(instants), 1, d.name)
                self.assertEqual(instants[0][0], verdict)
                self.assertEqual(instants[0][2]["verdict"], verdict)
                self.assertTrue(instants[0][2]["reason"])
                verdicts[verdict] = d.name
            else:
                self.assertEqual(perfetto.instants[uuid], [], d.name)
        self.assertEqual(set(verdicts), {"truncated", "missing", "overflowed"})
        no_record = [d for d in perfetto.tracks.values() if d.name == "no record"]
        self.assertEqual(len(no_record), 1)
        missing = [d for d in self.unit_tracks(perfetto).values() if "[missing]" in d.name][0]
        self.assertEqual(missing.parent_uuid, no_record[0].uuid)
        repaired = [a for s in perfetto.slices.values() for *_, a in s if a.get("repaired")]
        self.assertGreater(len(repaired), 0)

    def test_counters_count_active_units_monotone_in_time(self):
        perfetto, chrome = self.traces["plain"]
        counters = {u: v for u, v in perfetto.counters.items()
                    if perfetto.tracks[u].name == "active units"}
        self.assertEqual(len(counters), len({sm for sm in chrome.threads.values()}))
        for uuid, values in counters.items():
            times = [t for t, _ in values]
            self.assertEqual(times, sorted(times), perfetto.tracks[uuid].name)
            self.assertEqual(len(set(times)), len(times))
            self.assertTrue(all(v >= 0 for _, v in values))
            self.assertGreater(max(v for _, v in values), 0)
            self.assertEqual(values[-1][1], 0)

    def test_arrival_flows_join_each_arrival_to_the_wait_it_released(self):
        perfetto, _ = self.traces["handoffs"]
        arrivals = {fid: f for fid, f in perfetto.flows.items()
                    if f["from"][1][0].startswith("arrive ")}
        self.assertEqual(len(arrivals), self.expect["arrival_flows"])
        for fid, f in arrivals.items():
            self.assertIsNotNone(f["to"], f"flow {fid} never ends")
            (src_track, src), (dst_track, dst) = f["from"], f["to"]
            # "arrive full" (an instant, barrier full[s]) -> a "wait full" slice that ends
            # after the arrival, in the same block; a phase of full[s] is released by the
            # producer's arrival, one of empty[s] by a consumer's.
            array = src[0][len("arrive "):]
            self.assertEqual(src[2], src[3], f"flow {fid} starts at an instant")
            self.assertEqual(src[1], ["barrier_arrive"])
            self.assertTrue(src[4]["barrier"].startswith(array + "["), src[4])
            self.assertIn("phase", src[4])
            self.assertEqual(dst[0], "wait " + array, f"flow {fid}")
            self.assertEqual(dst[1], ["phase_wait"])
            self.assertGreaterEqual(dst[3], src[2], f"flow {fid}: released before the arrival")
            self.assertEqual(self.block_of(perfetto, src_track),
                             self.block_of(perfetto, dst_track))
            # "block (b) warp 0 producer": the unit index, then the role (since issue 31).
            producer = perfetto.tracks[src_track].name.split()[3] == "0"
            self.assertEqual(producer, array == "full", f"flow {fid}")
            self.assertNotEqual(src_track, dst_track)

    def test_async_copies_are_on_lanes_under_their_unit_with_a_flow_each(self):
        perfetto, _ = self.traces["handoffs"]
        copies = {fid: f for fid, f in perfetto.flows.items() if f["from"][1][0] == "copy"}
        self.assertEqual(len(copies), self.expect["async_flows"])
        for fid, f in copies.items():
            (src_track, src), (dst_track, dst) = f["from"], f["to"]
            # Issue -> completion: the copy's begin -> its end, on its async lane.
            self.assertIs(src, dst, f"flow {fid}")
            self.assertEqual(src[1], ["async_copy"])
            self.assertTrue(perfetto.tracks[src_track].name.startswith("async "))
            self.assertLess(src[2], src[3])
        lanes = [d for d in perfetto.tracks.values() if d.name.startswith("async ")]
        self.assertEqual(len(lanes), self.expect["blocks"])  # one per producer

    def test_each_batch_clears_the_unit_sequence_and_interns_and_annotates_again(self):
        perfetto, chrome = self.traces["batched"]
        self.assertEqual(perfetto.problems, [])
        # 100,000 events in batches of at least 32 Ki events, cut at block ends.
        clears = perfetto.sequences[2].clears
        self.assertGreaterEqual(clears, 3)
        self.assertLessEqual(clears, 4)
        self.assertEqual(perfetto.sequences[1].clears, 1)
        # A site's annotations come with its first begin in each batch.
        for site in ("kernel", "mainloop", "load", "mma"):
            annotated = [a for s in perfetto.slices.values() for n, _, _, _, a in s
                         if n == site and a]
            self.assertEqual(len(annotated), clears, site)
            self.assertEqual({a["kind"] for a in annotated},
                             {chrome.other["sites"][annotated[0]["site"]]["kind"]})
        # Still about one byte per event.
        size = os.path.getsize(os.path.join(self.dir, "batched.pftrace"))
        self.assertLessEqual(size / (2 * chrome.other["slices"]), 2.0)

    def test_stage_ring_counters_are_monotone_and_bounded_by_the_ring(self):
        perfetto, _ = self.traces["handoffs"]
        rings = {u: d.name for u, d in perfetto.tracks.items() if " stages ready in " in d.name}
        # Per block, full[*] and empty[*].
        self.assertEqual(len(rings), 2 * self.expect["blocks"])
        self.assertEqual({n.split(" ")[0] for n in rings.values()}, {"full[*]", "empty[*]"})
        peak = {}
        for uuid, name in rings.items():
            values = perfetto.counters[uuid]
            times = [t for t, _ in values]
            self.assertEqual(times, sorted(times), name)
            self.assertEqual(len(set(times)), len(times), name)
            self.assertTrue(all(0 <= v <= self.expect["stages"] for _, v in values), name)
            self.assertEqual(values[-1][1], 0, name)
            peak[name.split(" ")[0]] = max(peak.get(name.split(" ")[0], 0),
                                           max(v for _, v in values))
        # Consumer-bound: the producer runs ahead, a full stage waits for the consumers.
        self.assertGreaterEqual(peak["full[*]"], 1)

    def test_output_is_compact(self):
        perfetto, chrome = self.traces["plain"]
        size = os.path.getsize(os.path.join(self.dir, "plain.pftrace"))
        events = 2 * chrome.other["slices"]
        self.assertLessEqual(size / events, 12.0)

    def test_every_packet_is_inside_deflated_compressed_packets(self):
        for name, (perfetto, _) in self.traces.items():
            self.assertGreater(perfetto.compressed, 0, name)
            self.assertEqual(perfetto.uncompressed, 0, name)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
