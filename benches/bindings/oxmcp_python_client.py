"""oxmcp's Python client calling `echo` on the server command given as arguments, exactly as
the other client benchmarks do: warm-up, sequential, batches of 16 concurrent calls."""

import asyncio
import sys
from functools import partial
from pathlib import Path

from oxmcp import Client

# The timing is the Python benchmarks' shared one (benches/python/client_timing.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from client_timing import BATCH, time_calls  # noqa: E402


async def main(command: list[str]) -> None:
    args = {"text": "hello from the benchmark"}
    async with Client.stdio(command[0], command[1:]) as client:
        call = partial(client.call_tool, "echo", args)
        await time_calls(call, lambda: asyncio.gather(*(call() for _ in range(BATCH))))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
