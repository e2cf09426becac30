"""An ``async def`` tool whose body can never suspend runs like a ``def``: on a worker thread,
without a hop to the event loop, and gives the same results and errors. One that awaits, or
that reaches for the running loop (``asyncio.get_running_loop``), still runs on the loop.
Served over Streamable HTTP on 127.0.0.1 and called with oxmcp's client."""

from __future__ import annotations

import asyncio
import threading

import oxmcp


async def test_only_coroutines_that_cannot_suspend_skip_the_loop() -> None:
    server = oxmcp.Server("no-hop")

    @server.tool()
    async def quick(n: int) -> str:
        return f"{n * 2} {threading.get_ident()}"

    @server.tool()
    async def awaits(n: int) -> str:
        await asyncio.sleep(0)
        return f"{n * 2} {threading.get_ident()}"

    @server.tool()
    async def needs_loop(n: int) -> str:
        asyncio.get_running_loop()
        return f"{n * 2} {threading.get_ident()}"

    @server.tool()
    async def fails(n: int) -> str:
        raise ValueError(f"no {n}")

    loop_thread = threading.get_ident()
    http = await server.serve_http(port=0)
    try:
        async with oxmcp.Client.http(http.url) as client:
            for name, on_loop in [("quick", False), ("awaits", True), ("needs_loop", True)]:
                result = await client.call_tool(name, {"n": 21})
                assert not result.get("isError"), result
                value, thread = result["content"][0]["text"].split()
                assert value == "42", name
                assert (int(thread) == loop_thread) is on_loop, name
            failed = await client.call_tool("fails", {"n": 7})
            assert failed["isError"] is True
            assert "ValueError: no 7" in failed["content"][0]["text"]
            # Bad arguments are refused by the schema before the coroutine is ever made.
            bad = await client.call_tool("quick", {"n": "many"})
            assert bad["isError"] is True
            # Many at once: each answered once, with its own result.
            many = await asyncio.gather(*(client.call_tool("quick", {"n": i}) for i in range(200)))
            assert [r["content"][0]["text"].split()[0] for r in many] == [
                str(i * 2) for i in range(200)
            ]
    finally:
        await http.shutdown()
