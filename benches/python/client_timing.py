"""The measurement every Python client benchmark makes, so that their rows compare like with
like: 200 warm-up calls, then sequential calls, then batches of 16 concurrent calls, each phase
until the stop rule (BENCH_MIN_CALLS, BENCH_MIN_SECS, BENCH_MAX_SECS); then one JSON line on
stdout, the same as the Rust and Node client benchmarks print."""

import json
import os
import resource
import time
from collections.abc import Awaitable, Callable

MIN_CALLS = int(float(os.environ.get("BENCH_MIN_CALLS", "10000")))
MIN_SECS = float(os.environ.get("BENCH_MIN_SECS", "1"))
MAX_SECS = float(os.environ.get("BENCH_MAX_SECS", "3"))
BATCH = 16


def cpu_us() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e6


def done(calls: int, secs: float) -> bool:
    return secs >= MAX_SECS or (calls >= MIN_CALLS and secs >= MIN_SECS)


async def time_calls(
    call: Callable[[], Awaitable[object]], batch: Callable[[], Awaitable[object]]
) -> None:
    """Times ``call`` (one `echo` call) and ``batch`` (16 of them at once, in the client's
    own way of running them concurrently) and prints the rates and CPU per call."""
    for _ in range(200):
        await call()
    c0, t0, seq = cpu_us(), time.perf_counter(), 0
    while not done(seq, time.perf_counter() - t0):
        await call()
        seq += 1
    seq_secs, seq_cpu = time.perf_counter() - t0, cpu_us() - c0
    c1, t1, conc = cpu_us(), time.perf_counter(), 0
    while not done(conc, time.perf_counter() - t1):
        await batch()
        conc += BATCH
    conc_secs, conc_cpu = time.perf_counter() - t1, cpu_us() - c1
    print(json.dumps({
        "seq_calls_s": seq / seq_secs, "seq_cpu_us": seq_cpu / seq,
        "conc16_calls_s": conc / conc_secs, "conc16_cpu_us": conc_cpu / conc,
    }))
