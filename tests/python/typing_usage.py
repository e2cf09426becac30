"""Type-checked by `mypy --strict` (make python-test): the public API as users write it, so
the stubs and annotations stay honest. It is never executed by the tests."""

from __future__ import annotations

from typing import Any

from oxmcp import (
    Client,
    Context,
    Host,
    Image,
    McpError,
    OAuth,
    RpcError,
    Server,
    TaskHandle,
    TaskRequiredError,
    WsServer,
    translate,
)
from oxmcp.cli import run as run_cli
from oxmcp.host import ApprovalRequest, EntryIssue, ServerStatus, Transcript
from oxmcp.types import AccessClaims, CallToolResult, ListToolsResult, Task, TaskStatus

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


async def websocket() -> str:
    ws: WsServer = await server.serve_ws(
        port=0, allowed_origins=["https://app.example"], max_message_bytes=1 << 20
    )
    both = await server.serve_http(port=0, websocket=True, max_message_bytes=1 << 20)
    async with Client.websocket(
        ws.url, headers={"Authorization": "Bearer t"}, connect_timeout=5.0, timeout=1.0
    ) as c:
        result: CallToolResult = await c.call_tool("add", {"a": 1})
    await both.shutdown()
    await ws.shutdown()
    server.run("ws", host="127.0.0.1", port=8000)
    server.run("http", websocket=True)
    return ws.url + str(ws.port) + str(result["isError"] if "isError" in result else "")


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


class Store:
    def load(self, key: str) -> dict[str, Any] | None:
        return None

    def save(self, key: str, value: dict[str, Any]) -> None:
        pass

    def remove(self, key: str) -> None:
        pass


async def use_host() -> str:
    tools = translate.to_openai([{"name": "add", "inputSchema": {"type": "object"}}])
    reports: list[translate.ToolReport] = tools.reports
    calls: list[translate.ToolCall] = tools.calls({"role": "assistant", "content": "hi"})
    back = tools.results([(c, {"content": []}) for c in calls])
    gemini = translate.to_gemini({"s": []}, openapi=True).tools
    prompt = translate.to_prompt([{"name": "add", "inputSchema": {"type": "object"}}], "xml")
    system: str = prompt.system
    for call in prompt.calls("<tool_use><name>add</name><arguments>{}</arguments></tool_use>"):
        if "error" in call:
            print(call["error"])
    replied: translate.PromptReply = prompt.reply(system)
    print(prompt.results([(c, "failed") for c in replied["calls"]]), prompt.history([]))

    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": "done"}

    async with Host.from_config("mcp.json", connect_timeout=5.0) as host:
        status: list[ServerStatus] = await host.status()
        result: CallToolResult = await host.call_tool("weather", "get_weather", {"city": "x"})
        t = await host.translate("anthropic", namespace="collision")
        transcript: Transcript = await host.run_agent(model, [], provider="openai", max_steps=3)
        text_run: Transcript = await host.run_agent(model, [], provider="prompt:react")
        print(text_run["stop"] == "format_errors", text_run.get("reason"))

        async def approve(call: ApprovalRequest) -> bool | str | dict[str, Any]:
            hints = call["annotations"] or {}
            if hints.get("destructiveHint"):
                return f"no {call['tool']} on {call['server']}"
            return dict(call["arguments"]) if call["arguments"] else True

        approved: Transcript = await host.run_agent(model, [], approve=approve)
        approved_sync: Transcript = await host.run_agent(model, [], approve=lambda call: True)
        skipped: list[EntryIssue] = status[0].get("skipped", [])
        print(approved["steps"] + approved_sync["steps"], [s["field"] for s in skipped])
        async with Client.stdio("old-server", era="handshake") as pinned:
            print(pinned.protocol_version)
        auth = OAuth(
            client_id="app", authorizer=lambda url: url, token_store=Store(), allow_loopback=True
        )
        async with Client.http("http://127.0.0.1:1/mcp", auth=auth) as c:
            await c.ping()
        code: int = run_cli(["tools", "--config", "mcp.json"])
        return (
            transcript["final_text"]
            + str(len(status) + len(result["content"]) + len(t.tools) + code)
            + str(len(reports) + len(back) + len(gemini))
        )


async def use_tasks() -> str:
    server = Server("tasks", "1.0.0")

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        await ctx.report_status("working on it")
        return f"slept {seconds}"

    @server.tool(task="required", task_start="deferred")
    async def asks_first(ctx: Context) -> str:
        started: str | None = await ctx.start_task()
        return started or (ctx.task_id or "")

    async with Client.http("http://127.0.0.1:1/mcp") as c:
        handle: TaskHandle = await c.call_tool_as_task("slow", {"seconds": 1}, ttl=60)
        task_id: str | None = handle.id
        status: Task = await handle.status()
        state: TaskStatus = status["status"]
        async for update in handle:
            print(update["status"], update.get("statusMessage"))
        result: CallToolResult = await handle.result()
        await handle.cancel()
        again: TaskHandle = c.task(task_id or "")
        print(state, await again.status())
        try:
            await c.call_tool("asks_first")
        except TaskRequiredError as e:
            print(e.tool)
    async with Host.from_config("mcp.json") as host:
        hosted: CallToolResult = await host.call_tool("s", "slow", {"seconds": 1}, task=True)
    return str(len(result["content"]) + len(hosted["content"]))
