"""The official Python SDK's client (mcp 2.3, `Client` over stdio) calling `echo` on the
server command given as arguments: 200 warm-up calls, sequential calls, batches of 16
concurrent calls. Prints one JSON line like the Rust client benchmarks."""

import json
import os
import resource
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

MIN_CALLS = int(float(os.environ.get("BENCH_MIN_CALLS", "10000")))
MIN_SECS = float(os.environ.get("BENCH_MIN_SECS", "1"))
MAX_SECS = float(os.environ.get("BENCH_MAX_SECS", "3"))


def cpu_us() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e6


def done(calls: int, secs: float) -> bool:
    return secs >= MAX_SECS or (calls >= MIN_CALLS and secs >= MIN_SECS)


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    args = {"text": "hello from the benchmark"}
    async with Client(params, mode="legacy") as client:
        for _ in range(200):
            await client.call_tool("echo", args)
        c0, t0, seq = cpu_us(), time.perf_counter(), 0
        while not done(seq, time.perf_counter() - t0):
            await client.call_tool("echo", args)
            seq += 1
        seq_secs, seq_cpu = time.perf_counter() - t0, cpu_us() - c0
        c1, t1, conc = cpu_us(), time.perf_counter(), 0
        while not done(conc, time.perf_counter() - t1):
            async with anyio.create_task_group() as tg:
                for _ in range(16):
                    tg.start_soon(client.call_tool, "echo", args)
            conc += 16
        conc_secs, conc_cpu = time.perf_counter() - t1, cpu_us() - c1
    print(json.dumps({
        "seq_calls_s": seq / seq_secs, "seq_cpu_us": seq_cpu / seq,
        "conc16_calls_s": conc / conc_secs, "conc16_cpu_us": conc_cpu / conc,
    }))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
