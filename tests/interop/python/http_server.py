"""Serves one of the stdio interop servers over HTTP with the official Python SDK.

Usage: http_server.py APP TRANSPORT [--port N]

APP picks the MCPServer: "tools" is server.py's (greet, add, fail), "features" is
feature_server.py's (resources, prompts, logging, sampling, elicitation, roots...).
TRANSPORT picks how the SDK serves it:

- "streamable": Streamable HTTP with sessions (`Mcp-Session-Id`), SSE answers;
- "stateless": Streamable HTTP with `stateless_http=True` (no sessions);
- "json": sessions, `json_response=True` (plain JSON answers, never SSE);
- "stateless-json": both;
- "sse": the legacy HTTP+SSE transport of 2024-11-05 (`GET /sse`, `POST /messages/`).

Whatever the transport, a request whose `MCP-Protocol-Version` header names a stateless
revision (2026-07-28) is served on its own by the SDK's modern entry point.

The socket is bound before anything else (port 0, the default, lets the OS choose) and
the script prints "listening on URL" on stdout once uvicorn serves it;
core/tests/interop reads that line. The server runs until killed.
"""

import argparse
import asyncio
import socket
import sys
import warnings

import uvicorn
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

TRANSPORTS = ["streamable", "stateless", "json", "stateless-json", "sse"]


def load_app(name: str):
    # The scripts sit next to this one (sys.path[0]); each builds its MCPServer on import.
    if name == "tools":
        import server as module
    else:
        import feature_server as module
    return module.server


async def serve(app_name: str, transport: str, port: int) -> None:
    mcp = load_app(app_name)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A restart on the same port must not wait for TIME_WAIT to clear.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    host, bound = sock.getsockname()
    if transport == "sse":
        app = mcp.sse_app(host=host)
        path = "/sse"
    else:
        app = mcp.streamable_http_app(
            host=host,
            stateless_http=transport.startswith("stateless"),
            json_response=transport.endswith("json"),
        )
        path = "/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"listening on http://{host}:{bound}{path}", flush=True)

    announcer = asyncio.create_task(announce())
    await server.serve(sockets=[sock])
    announcer.cancel()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("app", choices=["tools", "features"])
    parser.add_argument("transport", choices=TRANSPORTS)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.app, args.transport, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
