#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target into fuzz/corpus/<target>/:
a few small valid inputs and a few invalid ones, in the byte layout each
target's header comment describes. Run it again after changing a layout."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC, VERSION, END = 0x424E4D4F, 4, (1 << 64) - 1


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def frame_header():
    def seed(magic=MAGIC, version=VERSION, ftype=2, job=7, tag=0, seq=1, length=100, my_job=7, rank=1):
        return struct.pack("<IHHIIQQIi", magic, version, ftype, job, tag, seq, length, my_job, rank)
    write("frame_header", "valid", seed())
    write("frame_header", "valid_max_length", seed(length=1 << 30))
    write("frame_header", "bad_magic", seed(magic=0x50545448))
    write("frame_header", "bad_version", seed(version=2))
    write("frame_header", "other_job", seed(job=8))
    write("frame_header", "too_long", seed(length=(1 << 30) + 1))
    write("frame_header", "short", b"OMNB")


def block_batch():
    def seed(batch, count=16, block_size=4, elem_sel=2, shards=1, shard=0):
        return struct.pack("<IHBBB3x", count, block_size - 1, elem_sel, shards - 1, shard) + batch

    def batch(indices, nxt, value_bytes):
        return struct.pack("<IIQ", len(indices), 0, nxt) + b"".join(struct.pack("<Q", i) for i in indices) + \
            bytes(range(value_bytes % 256)) + b"\1" * (value_bytes - value_bytes % 256)
    write("block_batch", "two_blocks", seed(batch([0, 2], 3, 2 * 4 * 4)))
    write("block_batch", "short_last_block", seed(batch([3], END, 2 * 4), count=14))
    write("block_batch", "empty_end", seed(batch([], END, 0)))
    write("block_batch", "second_shard", seed(batch([2], 3, 16), shards=2, shard=1))
    write("block_batch", "out_of_order", seed(batch([2, 1], END, 32)))
    write("block_batch", "out_of_range", seed(batch([4], END, 16)))
    write("block_batch", "size_mismatch", seed(batch([0], 1, 15)))
    write("block_batch", "next_not_after", seed(batch([2], 1, 16)))

    def pad8(b):
        return b + b"\0" * (-len(b) % 8)

    def bitmap(indices, nxt, maps, values):
        return struct.pack("<IIQ", len(indices), 1, nxt) + b"".join(struct.pack("<Q", i) for i in indices) + \
            pad8(bytes(maps)) + b"".join(struct.pack("<f", v) for v in values)

    def offsets(blocks, nxt, first, offs, values):
        return struct.pack("<IIQQII", blocks, 2, nxt, first, len(offs), 0) + \
            pad8(b"".join(struct.pack("<I", o) for o in offs)) + b"".join(struct.pack("<f", v) for v in values)
    write("block_batch", "bitmap", seed(bitmap([0, 2], 3, [0b0101, 0b1000], [1, 2, 3])))
    write("block_batch", "bitmap_past_block", seed(bitmap([3], END, [0b0100], [1]), count=14))
    write("block_batch", "offsets", seed(offsets(2, 3, 0, [0, 2, 11], [1, 2, 3])))
    write("block_batch", "offsets_count_mismatch", seed(offsets(1, END, 0, [0, 9], [1, 2])))

    def offsets16(blocks, nxt, first, ends, lows, values):
        return struct.pack("<IIQQII", blocks, 3, nxt, first, len(lows), len(ends)) + \
            pad8(b"".join(struct.pack("<I", e) for e in ends) + b"".join(struct.pack("<H", o) for o in lows)) + \
            b"".join(struct.pack("<f", v) for v in values)
    write("block_batch", "offsets16", seed(offsets16(2, 3, 0, [3], [0, 2, 11], [1, 2, 3])))
    # Elements 5, 70000, 140000 and 140001 at block size 16: three pages.
    write("block_batch", "offsets16_pages", seed(offsets16(3, END, 0, [1, 2, 4], [5, 4464, 8928, 8929], [1, 2, 3, 4]),
                                                 count=200000, block_size=16))
    write("block_batch", "offsets16_ends_short", seed(offsets16(2, END, 0, [2], [0, 2, 11], [1, 2, 3])))


def chunk_reader():
    def stream(frames, begin=0, span=100, tag=5, seq=9):
        return struct.pack("<QIIQ", begin, span, tag, seq) + b"".join(frames)

    def frame(payload, ftype=5, tag=5, seq=9):
        return struct.pack("<HIQI", ftype, tag, seq, len(payload)) + payload

    def sparse(indices, last=1):
        return struct.pack("<IBBHQ", len(indices), 0, last, 0, 0) + \
            b"".join(struct.pack("<I", i) for i in indices) + b"".join(struct.pack("<f", 1.5) for _ in indices)

    def dense(first, items, last):
        return struct.pack("<IBBHQ", items, 1, last, 0, first) + struct.pack("<f", 2.0) * items
    write("chunk_reader", "sparse", stream([frame(sparse([1, 5, 99]))]))
    write("chunk_reader", "sparse_two_frames", stream([frame(sparse([1, 5], 0)), frame(sparse([7, 8]))]))
    write("chunk_reader", "dense_two_frames", stream([frame(dense(10, 4, 0)), frame(dense(14, 2, 1))], begin=10, span=6))
    write("chunk_reader", "empty", stream([frame(sparse([]))]))
    write("chunk_reader", "wrong_type", stream([frame(sparse([1]), ftype=4)]))
    write("chunk_reader", "wrong_seq", stream([frame(sparse([1]), seq=8)]))
    write("chunk_reader", "index_outside", stream([frame(sparse([100]))]))
    write("chunk_reader", "dense_gap", stream([frame(dense(10, 2, 0)), frame(dense(13, 3, 1))], begin=10, span=6))
    write("chunk_reader", "switches_kind", stream([frame(sparse([1], 0)), frame(dense(0, 100, 1))]))


def npy_header():
    def npy(shape, data, descr="<f4", fortran=False, version=1):
        d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
        prefix = 10 if version == 1 else 12
        while (prefix + len(d) + 1) % 64:
            d += " "
        d += "\n"
        size = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
        return b"\x93NUMPY" + bytes([version, 0]) + size + d.encode() + data
    write("npy_header", "vector", npy("(3,)", struct.pack("<3f", 0, 1.5, 0)))
    write("npy_header", "matrix_v2", npy("(2, 3)", b"\0" * 24, descr="<i4", version=2))
    write("npy_header", "scalar_v3", npy("()", b"\0" * 4, version=3))
    write("npy_header", "fortran_vector", npy("(2,)", b"\0" * 8, fortran=True))
    write("npy_header", "negative", npy("(-5,)", b"\1" * 64))
    write("npy_header", "minus_inside", npy("(4-08)", b"\1" * 64))
    write("npy_header", "huge", npy("(4611686018427387905,)", b"\1" * 64))
    write("npy_header", "truncated", npy("(100,)", b"\0" * 396))
    write("npy_header", "wrong_type", npy("(2,)", b"\0" * 16, descr="<f8"))
    write("npy_header", "structured", b"\x93NUMPY\x01\x00\x32\x00{'descr': [('a', '<f4')], 'fortran_order': False}\n")


def result_file():
    import json
    config = {"collective": "allreduce", "size_bytes": 4096, "dtype": "float", "density": 0.1, "block_size": 256,
              "nodes": 2, "aggregators": 0, "overlap": "random", "workload": "blocks", "seed": 1, "device": "cpu",
              "inplace": False, "net": "loopback", "link_rate_bps": 0, "link_delay_ns": 0, "transport": "tcp",
              "shard_layout": "contiguous"}
    record = {"algo": "omni", "config": config, "count": 1024, "skipped": False, "iters": 2, "warmup": 1,
              "repeat": 1, "time_us": {"median": 10.5, "p95": 11, "p99": 11, "min": 10, "max": 11, "mean": 10.5,
                                       "stdev": 0.5, "cv": 0.05},
              "samples_us": [10, 11], "runs": [{"median_us": 10.5, "cpu_us_per_call": 20,
                                                "cpu_ns_per_wire_byte": 1.5}],
              "algbw_GBps": 0.4, "busbw_GBps": 0.4,
              "wire_bytes": {"sent_per_rank_max": 1000, "sent_total": 2000, "frames_per_rank_max": 2,
                             "frames_total": 4},
              "analytic_bytes": {"sent_per_rank_max": 990, "sent_total": 1980},
              "measured_density": {"element": 0.1, "block": 0.1, "block_mean": 0.1, "union_block": 0.2,
                                   "union_element": 0.2},
              "checked": True, "correct": True, "wrong_elements": 0, "wrong_calls": 0, "calls_checked": 3,
              "cpu": {"user_us_per_call": 10, "sys_us_per_call": 10, "rank_max_us_per_call": 12,
                      "ns_per_wire_byte": 1.5},
              "speedup_vs": {"ring": 1.5}}
    doc = {"schema_version": 2, "tool": "omni-bench", "command_line": "omni-bench allreduce", "results": [record]}
    write("result_file", "schema2", json.dumps(doc).encode())
    old = dict(record)
    old.update(config)
    for k in ("config", "warmup", "repeat", "runs", "wrong_calls", "calls_checked", "cpu"):
        old.pop(k, None)
    for k in ("net", "link_rate_bps", "link_delay_ns", "transport", "shard_layout"):
        old.pop(k, None)
    old["link_rate"] = "100mbit"
    write("result_file", "schema1", json.dumps({"schema_version": 1, "results": [old]}).encode())
    skipped = {"algo": "nccl", "config": config, "skipped": True, "skip_reason": "no GPU"}
    write("result_file", "skipped", json.dumps({"schema_version": 2, "results": [skipped]}).encode())
    write("result_file", "wrong_type", json.dumps({"schema_version": 2, "results": [dict(record, iters="two")]}).encode())
    write("result_file", "truncated", json.dumps(doc).encode()[:200])
    zero = dict(record, time_us=dict(record["time_us"], median=0))
    write("result_file", "zero_median", json.dumps({"schema_version": 2, "results": [zero]}).encode())
    # A --duration checkpoint: the run was still going (complete false).
    soak = dict(record, duration={"requested_s": 60, "elapsed_s": 30.5, "timed_calls": 40000, "complete": False,
                                  "percentiles_exact": False, "percentile_error": 0.0028})
    soak["config"] = dict(config, encoding="auto")
    write("result_file", "duration_checkpoint",
          json.dumps({"schema_version": 4, "complete": False, "results": [soak]}).encode())
    # Streams and sizes a result file is not: zeros (/dev/zero), nesting far
    # deeper than any result, a record nested deep inside, a long run of
    # records cut off part way (a writer killed mid-file).
    write("result_file", "zeros", bytes(4096))
    write("result_file", "deep_arrays", b"[" * 20000 + b"]" * 20000)
    write("result_file", "deep_in_record", json.dumps({"schema_version": 5, "results": [
        dict(record, speedup_vs=None)]}).encode().replace(b'"speedup_vs": null', b'"speedup_vs": ' + b"[" * 5000))
    write("result_file", "many_records_cut", json.dumps({"schema_version": 2, "results": [record] * 40}).encode()[:50000])


def trace_file():
    import json

    def span(pid, name, cat, tid, ts, dur, it=0, **extra):
        args = dict({"iter": it, "algo": "omni", "size": 4096}, **extra)
        return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}

    def meta(what, pid, tid, name):
        return {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}}
    events = []
    for pid in (0, 1):
        events += [meta("process_name", pid, 0, "rank %d (worker) host%d" % (pid, pid)),
                   meta("thread_name", pid, 0, "harness"), meta("thread_name", pid, 1, "omni lane 0")]
        for it in (0, 1):
            t0 = 100.0 * it + pid
            events += [span(pid, "barrier", "barrier", 0, t0, 5, it), span(pid, "allreduce", "call", 0, t0 + 5, 40, it),
                       span(pid, "scan", "compute", 1, t0 + 6, 10, it, blocks=4),
                       span(pid, "send", "send", 1, t0 + 16, 8, it, peer=1 - pid, bytes=1024, shard=pid),
                       span(pid, "recv", "recv", 1, t0 + 24, 12, it, peer=1 - pid, bytes=1024)]
    clock = [{"rank": r, "offset_ns": 1500 * r, "error_ns": 200 * r, "rounds": 8, "dropped_events": 0} for r in (0, 1)]
    other = {"tool": "omni-bench", "trace_format": 1, "command_line": "omni-bench allreduce --trace t.json",
             "configuration": {"sizes": [4096], "algos": ["omni"]}, "clock": clock, "dropped_events": 0}
    doc = {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}
    text = json.dumps(doc).encode()
    write("trace_file", "two_ranks", text)
    write("trace_file", "truncated", text[:len(text) // 2])
    write("trace_file", "no_other_data", json.dumps({"traceEvents": events}).encode())
    write("trace_file", "rank_without_process", json.dumps(dict(doc, traceEvents=events[:1] + [
        span(3, "x", "call", 0, 0, 1)])).encode())
    # Streams and sizes a file is not: what a FIFO, /dev/zero or a runaway
    # writer would give, and nesting far deeper than any trace.
    write("trace_file", "zeros", bytes(4096))
    write("trace_file", "deep_arrays", b"[" * 20000 + b"]" * 20000)
    write("trace_file", "deep_in_context", json.dumps(dict(doc, otherData=dict(other, configuration=None))).encode()
          .replace(b'"configuration": null', b'"configuration": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000))
    write("trace_file", "unterminated_deep", b'{"traceEvents": ' + b"[" * 100000)
    write("trace_file", "long_process_name", json.dumps(dict(doc, traceEvents=[
        meta("process_name", 0, 0, "rank 0 (worker) " + "h" * 60000)])).encode())
    write("trace_file", "huge_numbers", json.dumps(dict(doc, traceEvents=[
        span(0, "allreduce", "call", 0, 1e300, 1e300)], otherData=dict(other, clock=[
            {"rank": 0, "offset_ns": 1e300, "error_ns": -1e300, "rounds": 1, "dropped_events": 0}]))).encode())
    write("trace_file", "number_overflow", b'{"traceEvents": [1e99999], "otherData": {}}')
    # Found by fuzzing: a span whose peer is no rank of the trace loaded, and
    # the counters written for it named a rank without a process.
    write("trace_file", "regress-peer-not-a-rank", json.dumps(dict(doc, traceEvents=events + [
        span(1, "recv", "recv", 1, 30, 2, 1, peer=5, bytes=8)])).encode())


def store_protocol():
    magic = 0x53424D4F

    def request(conn, op, key=b"", value=b"", rank=0, world=0, flags=0):
        header = struct.pack("<IBBHIIIIQ", magic, op, flags, 0, len(key), rank, world, 0, len(value))
        return bytes([conn]) + header + bytes([len(key)]) + struct.pack("<H", len(value)) + key + value
    set_get = request(0, 1, b"addr/0", b"127.0.0.1:1") + request(1, 2, b"addr/0")
    write("store_protocol", "set_then_get", set_get)
    write("store_protocol", "get_before_set", request(1, 2, b"k") + request(0, 1, b"k", b"v"))
    barrier = b"".join(request(c, 4, b"b0", rank=c, world=3) for c in range(3))
    write("store_protocol", "barrier_of_three", barrier)
    gather = b"".join(request(c, 5, b"g", bytes([c]) * 5, rank=c, world=2, flags=1) for c in range(2))
    write("store_protocol", "gather_everyone", gather)
    write("store_protocol", "abort_mid_barrier", request(0, 4, b"b", rank=0, world=2) + bytes([255]))
    write("store_protocol", "drop_waiter", request(0, 2, b"never") + bytes([8]) + request(0, 1, b"never", b"x"))
    parts = struct.pack("<Q", 3) + b"abc" + struct.pack("<Q", 0)
    write("store_protocol", "gather_reply_two_parts", parts)


if __name__ == "__main__":
    frame_header()
    block_batch()
    chunk_reader()
    npy_header()
    result_file()
    trace_file()
    store_protocol()
