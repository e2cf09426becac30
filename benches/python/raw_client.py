"""The Python ceiling for an asyncio stdio client: no MCP library, only what any asyncio client
must do (a subprocess with pipes, write a JSON line, read lines, json.loads, resolve a future
by id). Same warm-up, stop rule and output as the other client benchmarks. A reference row:
how far a client on an asyncio loop can go on this machine."""

import asyncio
import json
import os
import resource
import sys
import time

MIN_CALLS = int(float(os.environ.get("BENCH_MIN_CALLS", "10000")))
MIN_SECS = float(os.environ.get("BENCH_MIN_SECS", "1"))
MAX_SECS = float(os.environ.get("BENCH_MAX_SECS", "3"))


def cpu_us() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e6


def done(calls: int, secs: float) -> bool:
    return secs >= MAX_SECS or (calls >= MIN_CALLS and secs >= MIN_SECS)


async def main(command: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    waiting: dict[int, asyncio.Future] = {}
    loop = asyncio.get_running_loop()
    next_id = 0

    async def reader() -> None:
        while line := await stdout.readline():
            m = json.loads(line)
            fut = waiting.pop(m.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(m)

    read_task = asyncio.create_task(reader())

    def request(method: str, params: dict) -> asyncio.Future:
        nonlocal next_id
        next_id += 1
        fut = loop.create_future()
        waiting[next_id] = fut
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}).encode() + b"\n")
        return fut

    await request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "raw-python", "version": "1"}})
    stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    args = {"name": "echo", "arguments": {"text": "hello from the benchmark"}}
    for _ in range(200):
        await request("tools/call", args)
    c0, t0, seq = cpu_us(), time.perf_counter(), 0
    while not done(seq, time.perf_counter() - t0):
        await request("tools/call", args)
        seq += 1
    seq_secs, seq_cpu = time.perf_counter() - t0, cpu_us() - c0
    c1, t1, conc = cpu_us(), time.perf_counter(), 0
    while not done(conc, time.perf_counter() - t1):
        await asyncio.gather(*(request("tools/call", args) for _ in range(16)))
        conc += 16
    conc_secs, conc_cpu = time.perf_counter() - t1, cpu_us() - c1
    print(json.dumps({
        "seq_calls_s": seq / seq_secs, "seq_cpu_us": seq_cpu / seq,
        "conc16_calls_s": conc / conc_secs, "conc16_cpu_us": conc_cpu / conc,
    }))
    stdin.close()
    read_task.cancel()
    await proc.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
