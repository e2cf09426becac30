"""Type-checked by `mypy --strict` (make python-test): the public API as users write it, so
the stubs and annotations stay honest. It is never executed by the tests."""

from __future__ import annotations

from oxmcp import Client, Context, Image, McpError, RpcError, Server
from oxmcp.types import AccessClaims, CallToolResult, ListToolsResult

server = Server("typed", "1.0.0", instructions="typed usage")


@server.tool()
def add(a: int, b: int = 2) -> int:
    return a + b


@server.tool(name="picture")
async def picture(ctx: Context) -> Image:
    await ctx.report_progress(1, 2, "half")
    await ctx.info("drawing")
    return Image(b"\x89PNG")


@server.resource("test://{name}")
def resource(name: str) -> str:
    return name


@server.prompt()
def greet(name: str) -> str:
    return f"hi {name}"


async def use() -> int:
    async with Client.stdio("python", ["server.py"], timeout=5.0) as c:
        tools: ListToolsResult = await c.list_tools()
        result: CallToolResult = await c.call_tool("add", {"a": 1}, timeout=1.0)
        text = result["content"][0].get("text", "")
        version: str = c.protocol_version
        try:
            await c.ping()
        except RpcError as e:
            code: int = e.code
            return code
        except McpError:
            return -1
        return len(tools["tools"]) + len(text) + len(version)


def verify_token(token: str) -> AccessClaims | None:
    return {"subject": "a", "scopes": ["mcp"], "audience": "http://127.0.0.1:8000/mcp"}


async def verify_async(token: str) -> AccessClaims | None:
    return None


async def scaled() -> str:
    replica = Server("replica", state_key=bytes(32))

    @replica.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("name?", {"type": "object"}, key="name")
        roots = await ctx.list_roots(key="roots")
        await ctx.close_stream()
        return f"{answer['action']} {len(roots['roots'])} {ctx.client_supports('roots')}"

    http = await replica.serve_http(port=8000, store="redis://127.0.0.1:6379/", sse_retry=0.5)
    await http.shutdown()
    guarded = await replica.serve_http(
        port=8001, auth=verify_async, authorization_servers=["https://auth.example"]
    )
    replica.run("http", auth=verify_token, authorization_servers=["https://auth.example"])
    return guarded.url
