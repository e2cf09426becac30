"""The Python ceiling for an asyncio stdio client: no MCP library, only what any asyncio client
must do (a subprocess with pipes, write a JSON line, read lines, json.loads, resolve a future
by id). Same warm-up, stop rule and output as the other client benchmarks. A reference row:
how far a client on an asyncio loop can go on this machine."""

import asyncio
import json
import sys
from functools import partial

from client_timing import BATCH, time_calls


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
    call = partial(request, "tools/call", args)
    await time_calls(call, lambda: asyncio.gather(*(call() for _ in range(BATCH))))
    stdin.close()
    read_task.cancel()
    await proc.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
