"""An MCP server built with the official Python SDK 1.x (`FastMCP`), served over its WebSocket
transport (`mcp.server.websocket.websocket_server`, an ASGI app under uvicorn), for oxmcp's
WebSocket interop cells (core/tests/interop/ws.rs). WebSocket is gone from the SDK in 2.x,
hence this separate 1.x peer.

Usage: ws_server.py [--port N]

The socket is bound first (port 0, the default, lets the OS choose); once uvicorn serves it the
script prints "listening on ws://127.0.0.1:PORT/ws" on stdout, which the test reads. The
server runs until killed. Tools:

- `greet(name)`: a plain text result;
- `add(a, b)`: a structured result with an output schema;
- `steps(count)`: reports `count` progress steps, then answers;
- `ask_name()`: asks the client for a name (elicitation) and greets it;
- `wait()`: sleeps until cancelled, then prints "cancelled: wait" on stderr.
"""

import argparse
import asyncio
import socket
import sys
import warnings
from importlib.metadata import version

# The SDK marks its WebSocket transport deprecated (it was never part of the spec).
warnings.filterwarnings(
    "ignore",
    category=DeprecationWarning,
    message="The WebSocket (client|server) transport is deprecated",
)

import anyio  # noqa: E402
import uvicorn  # noqa: E402
from mcp.server.fastmcp import Context, FastMCP  # noqa: E402
from mcp.server.websocket import websocket_server  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import WebSocketRoute  # noqa: E402
from starlette.websockets import WebSocket  # noqa: E402

server = FastMCP("python-ws", instructions="WebSocket test server for oxmcp interop.")


class Sum(BaseModel):
    """The structured result of `add`."""

    sum: int


class Name(BaseModel):
    """What `ask_name` asks for."""

    name: str


@server.tool(structured_output=False)
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(sum=a + b)


@server.tool(structured_output=False)
async def steps(count: int, ctx: Context) -> str:
    """Reports `count` progress steps."""
    for i in range(1, count + 1):
        await ctx.report_progress(i, count, f"step {i}")
    return f"{count} steps done"


@server.tool(structured_output=False)
async def ask_name(ctx: Context) -> str:
    """Asks the client for a name."""
    answer = await ctx.elicit("Your name?", Name)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}!"


@server.tool(structured_output=False)
async def wait() -> str:
    """Sleeps until cancelled."""
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        print("cancelled: wait", file=sys.stderr, flush=True)
        raise
    return "woke up"


async def endpoint(websocket: WebSocket) -> None:
    low_level = server._mcp_server
    async with websocket_server(websocket.scope, websocket.receive, websocket.send) as (
        read,
        write,
    ):
        await low_level.run(read, write, low_level.create_initialization_options())


async def serve(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    host, bound = sock.getsockname()
    app = Starlette(routes=[WebSocketRoute("/ws", endpoint=endpoint)])
    config = uvicorn.Config(app, log_level="warning", lifespan="off", ws="websockets-sansio")
    uv = uvicorn.Server(config)

    async def announce() -> None:
        while not uv.started:
            await asyncio.sleep(0.01)
        print(f"sdk mcp-{version('mcp')}", flush=True)
        print(f"listening on ws://{host}:{bound}/ws", flush=True)

    announcer = asyncio.create_task(announce())
    await uv.serve(sockets=[sock])
    announcer.cancel()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
