"""A stdio server whose `def` tool opens an oxmcp client with `asyncio.run` inside the handler
(a thread of the engine's tokio runtime), to the raw peer given as its argument: the client
must fall back to running on tokio there, and still work."""

from __future__ import annotations

import asyncio
import json
import sys

from oxmcp import Client, Server

server = Server("nested-client", "1.0.0")
PEER = sys.argv[1]


async def _call(text: str) -> dict[str, object]:
    async with Client.stdio(sys.executable, [PEER]) as client:
        result = await client.call_tool("echo", {"text": text})
        return {"text": result["content"][0]["text"], "hosted": client._native.is_hosted}


@server.tool()
def relay(text: str) -> str:
    """Calls the raw peer's `echo` from a fresh event loop inside this sync handler."""
    return json.dumps(asyncio.run(_call(text)))


if __name__ == "__main__":
    server.run()
