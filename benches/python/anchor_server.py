"""The `echo` tool on the official Python SDK (mcp 2.3) and FastMCP 4, as their docs show.

    python anchor_server.py lowlevel|mcpserver|fastmcp stdio
    python anchor_server.py lowlevel|mcpserver|fastmcp http|http-json PORT

The low-level server is the SDK's fastest path; MCPServer is its decorator API (FastMCP
renamed in mcp 2.x); fastmcp is the separate PyPI package many users start from. With
BENCH_TOOLS=N each registers N more tools (the catalogue rows).
"""

import asyncio
import os
import sys

import mcp_types as types

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
EXTRA = int(os.environ.get("BENCH_TOOLS", "0"))
N_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def catalogue_tool(add, i: int) -> None:
    """Registers `tool_i` through a decorator-style `add(name=, description=)`."""

    async def tool_n(n: int = 0) -> str:
        return str(i)

    add(name=f"tool_{i}", description=f"Tool number {i} of the catalogue")(tool_n)


def lowlevel():
    from mcp.server.lowlevel import Server

    # The low-level server has no registry: its list handler is the catalogue, built once.
    tools = types.ListToolsResult.model_validate(
        {"tools": [{"name": "echo", "description": "Echo the text", "inputSchema": SCHEMA}]
         + [{"name": f"tool_{i}", "description": f"Tool number {i} of the catalogue",
             "inputSchema": N_SCHEMA} for i in range(EXTRA)]}
    )

    async def list_tools(ctx, params):
        return tools

    async def call_tool(ctx, params):
        text = (params.arguments or {}).get("text", "")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def mcpserver():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("echo")

    @server.tool(description="Echo the text")
    async def echo(text: str) -> str:
        return text

    for i in range(EXTRA):
        catalogue_tool(server.tool, i)
    return server


def fastmcp():
    from fastmcp import FastMCP

    server = FastMCP("echo")

    @server.tool
    async def echo(text: str) -> str:
        """Echo the text"""
        return text

    for i in range(EXTRA):
        catalogue_tool(server.tool, i)
    return server


async def serve_stdio_lowlevel(server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(app, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def main() -> None:
    kind, transport = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    server = {"lowlevel": lowlevel, "mcpserver": mcpserver, "fastmcp": fastmcp}[kind]()
    json_response = transport == "http-json"
    if kind == "fastmcp":
        if transport == "stdio":
            server.run(show_banner=False)
        else:
            server.run(transport="http", host="127.0.0.1", port=port, show_banner=False,
                       json_response=json_response, log_level="warning")
        return
    if transport == "stdio":
        if kind == "lowlevel":
            asyncio.run(serve_stdio_lowlevel(server))
        else:
            server.run()
        return
    app = server.streamable_http_app(json_response=json_response, host="127.0.0.1",
                                     **({"max_sessions": 20_000} if kind == "lowlevel" else {}))
    serve_http(app, port)


if __name__ == "__main__":
    main()
