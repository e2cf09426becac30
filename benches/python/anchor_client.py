"""The official Python SDK's client (mcp 2.3, `Client` over stdio) calling `echo` on the
server command given as arguments: 200 warm-up calls, sequential calls, batches of 16
concurrent calls. Prints one JSON line like the Rust client benchmarks."""

import sys
from functools import partial

import anyio
from client_timing import BATCH, time_calls
from mcp import Client, StdioServerParameters


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    args = {"text": "hello from the benchmark"}
    async with Client(params, mode="legacy") as client:
        call = partial(client.call_tool, "echo", args)

        async def batch() -> None:
            async with anyio.create_task_group() as tg:
                for _ in range(BATCH):
                    tg.start_soon(client.call_tool, "echo", args)

        await time_calls(call, batch)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
