"""Drives oxmcp's conformance server over HTTP with the official Python SDK client.

Usage: http_client.py MODE KIND URL

MODE is the SDK client's connect mode: "auto" (must reach the stateless 2026-07-28
revision, which the SDK speaks over HTTP as self-contained POSTs), "legacy" (the
2025-11-25 handshake) or "2026-07-28" (adopted with no probe). KIND says how the server was
started: "stateful" (sessions), "stateless" (`conformance_server --http --stateless`) or
"json" (sessions, answers in JSON only: `HttpServerOptions::json_response`).
URL is the Streamable HTTP endpoint (the SDK's `streamable_http_client`), or with MODE
"legacy" and KIND "sse" the legacy HTTP+SSE endpoint (the SDK's `sse_client`).

Every HTTP exchange is recorded (an httpx event hook) so the script checks the transport as
well as the results: which session id the server handed out and whether every later request
carried it, which `MCP-Protocol-Version` each request declared, whether answers came as JSON
or SSE. The MCP checks reuse feature_client.py's (logging, sampling, elicitation, each with a
bad-input neighbour) and add tools, progress, stream resumption and the loss of a session
(the server answers 404 once the session is deleted). The script exits non-zero with a
MISMATCH line on stderr at the first difference; core/tests/interop runs it.
"""

import json
import sys
import warnings
from dataclasses import dataclass
from importlib.metadata import version

import anyio
import httpx2
from checks import PINNED_SDK, Mismatch, expect, expect_eq, ok, only_text, run_checks
from feature_client import (
    Host,
    check_elicitation,
    check_logging,
    check_sampling,
    expect_error,
)
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import Implementation

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

MODES = {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
KINDS = ["stateful", "stateless", "json", "sse"]


@dataclass
class Exchange:
    method: str
    path: str
    rpc: str | None
    session: str | None
    version: str | None
    last_event_id: str | None
    status: int
    content_type: str
    new_session: str | None

    def __str__(self) -> str:
        return (
            f"{self.method} {self.path} [{self.rpc}] session={self.session} "
            f"version={self.version} -> {self.status} {self.content_type} "
            f"session={self.new_session}"
        )


class HttpLog:
    """Every HTTP exchange of the SDK's transport, as the response headers arrive."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        rpc = None
        if request.method == "POST":
            try:
                rpc = json.loads(request.content).get("method")
            except (ValueError, AttributeError):
                rpc = None
        headers = request.headers
        self.exchanges.append(
            Exchange(
                method=request.method,
                path=request.url.raw_path.decode(),
                rpc=rpc,
                session=headers.get("mcp-session-id"),
                version=headers.get("mcp-protocol-version"),
                last_event_id=headers.get("last-event-id"),
                status=response.status_code,
                content_type=response.headers.get("content-type", "").split(";")[0],
                new_session=response.headers.get("mcp-session-id"),
            )
        )

    def dump(self) -> str:
        return "\n".join(str(e) for e in self.exchanges)

    def posts(self, rpc: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST" and e.rpc == rpc]


async def check_tools(client: Client, log: HttpLog, modern: bool, kind: str) -> None:
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    for name in [
        "test_simple_text",
        "test_error_handling",
        "test_tool_with_progress",
        "test_tool_with_logging",
        "test_sampling",
        "test_elicitation",
    ]:
        expect(name in names, f"tools/list lacks {name}: {names}")
    ok(f"tools/list ({len(names)} tools)")

    result = await client.call_tool("test_simple_text", {})
    expect_eq(
        (result.is_error, only_text(result, "test_simple_text")),
        (False, "This is a simple text response for testing."),
        "test_simple_text",
    )
    result = await client.call_tool("test_error_handling", {})
    expect_eq(
        (result.is_error, only_text(result, "test_error_handling")),
        (True, "This tool intentionally returns an error for testing"),
        "test_error_handling",
    )
    await expect_error(
        client.call_tool("no_such_tool", {}),
        -32602,
        "Unknown tool: no_such_tool",
        "unknown tool",
    )
    ok("tools/call: text, isError, unknown tool is JSON-RPC -32602")

    progress: list[tuple[float, float | None]] = []

    async def on_progress(
        value: float, total: float | None, _message: str | None
    ) -> None:
        progress.append((value, total))

    result = await client.call_tool(
        "test_tool_with_progress", {}, progress_callback=on_progress
    )
    expect_eq(
        only_text(result, "progress"),
        "Tool with progress executed successfully",
        "test_tool_with_progress",
    )
    if kind == "sse":
        # Everything travels on the one legacy stream (the SDK's SSE transport uses its own
        # HTTP client, so the log does not see its exchanges).
        expect_eq(progress, [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)], "progress")
        ok("progress notifications on the legacy SSE stream")
        return
    answer = log.posts("tools/call")[-1]
    if kind == "json" and not modern:
        # A JSON answer has no room for what came before it: the server drops progress.
        expect_eq(progress, [], "progress with JSON answers")
        expect_eq(answer.content_type, "application/json", "answer: media type")
        ok("JSON answers: no progress notifications")
        return
    # Progress rides the request's SSE stream; the callback runs before the result returns.
    expect_eq(progress, [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)], "progress")
    expect_eq(
        answer.content_type, "text/event-stream", "answer with progress: media type"
    )
    ok("progress notifications on the request's SSE stream")

    if not modern and kind == "stateful":
        # The server cuts the response stream before answering; the SDK resumes it with a
        # GET carrying Last-Event-ID and gets the answer there.
        result = await client.call_tool("test_reconnection", {})
        expect_eq(
            only_text(result, "test_reconnection"),
            "Reconnection test completed",
            "test_reconnection",
        )
        resumed = [e for e in log.exchanges if e.method == "GET" and e.last_event_id]
        expect(len(resumed) == 1, f"one resumption GET expected:\n{log.dump()}")
        expect_eq(
            (resumed[0].status, resumed[0].content_type),
            (200, "text/event-stream"),
            "resumption GET",
        )
        ok(
            f"a cut response stream is resumed (Last-Event-ID {resumed[0].last_event_id})"
        )


async def check_stateless_logging(client: Client, host: Host) -> None:
    """Without a session, logging/setLevel is accepted but cannot outlive its request."""
    await client.set_logging_level("warning")
    await client.call_tool("test_tool_with_logging", {})
    lines = await host.wait_for_logs(3)
    expect_eq([line["data"] for line in lines][:1], ["Tool execution started"], "logs")
    ok("logging: a stateless server keeps no level between requests")


async def check_no_back_channel(client: Client, host: Host) -> None:
    """A stateless handshake-era server has nowhere to receive an answer from: the tools that
    ask the client fail at once (a tool error), and the client is never asked."""
    for tool, arguments in [
        ("test_sampling", {"prompt": "What is 2+2?"}),
        ("test_elicitation", {"message": "Who are you?"}),
    ]:
        with anyio.fail_after(20):
            result = await client.call_tool(tool, arguments)
        text = only_text(result, tool)
        expect(result.is_error, f"{tool} without a session: {text!r}")
        ok(f"{tool} without a session is a tool error: {text!r}")
    expect_eq(host.asked, [], "questions asked without a session")


def check_http(log: HttpLog, modern: bool, kind: str) -> str | None:
    """The transport's shape; returns the session id, if any."""
    exchanges = log.exchanges
    posts = [e for e in exchanges if e.method == "POST"]
    expect(posts, "no POST at all")
    if modern:
        # 2026-07-28: every request stands alone, whatever the server's mode.
        expect_eq({e.version for e in posts}, {"2026-07-28"}, "MCP-Protocol-Version")
        expect_eq({e.new_session for e in exchanges}, {None}, "session ids handed out")
        expect_eq({e.session for e in exchanges}, {None}, "session ids sent")
        expect_eq([e for e in exchanges if e.method != "POST"], [], "GET or DELETE")
        expect_eq({e.rpc for e in posts} & {"initialize"}, set(), "initialize sent")
        ok("HTTP: self-contained POSTs at 2026-07-28, no session")
        return None
    init = log.posts("initialize")
    expect_eq(len(init), 1, "initialize POSTs")
    expect_eq(init[0].status, 200, "initialize status")
    later = [e for e in exchanges if e is not init[0]]
    expect(
        all(e.version == "2025-11-25" for e in later),
        f"MCP-Protocol-Version after the handshake:\n{log.dump()}",
    )
    if kind == "stateless":
        expect_eq({e.new_session for e in exchanges}, {None}, "session ids handed out")
        # No session, no stream for server-initiated messages.
        gets = [e.status for e in exchanges if e.method == "GET"]
        expect(set(gets) <= {405}, f"GET statuses {gets}")
        ok("HTTP: handshake without a session id, GET refused with 405")
        return None
    answers = {
        e.content_type for e in exchanges if e.method == "POST" and e.status == 200
    }
    # oxmcp answers in JSON when nothing comes before the answer, in SSE otherwise; with
    # JSON answers forced, never in SSE.
    expected = {"application/json"}
    if kind != "json":
        expected.add("text/event-stream")
    expect_eq(answers, expected, "media types of the answers")
    session = init[0].new_session
    expect(session is not None and len(session) >= 16, f"session id {session!r}")
    expect(
        all(e.session == session for e in later),
        f"a request without the session id:\n{log.dump()}",
    )
    get = [e for e in exchanges if e.method == "GET" and not e.last_event_id]
    expect(get, "no GET stream was opened")
    expect_eq(
        (get[0].status, get[0].content_type), (200, "text/event-stream"), "GET stream"
    )
    ok(f"HTTP: session {session[:8]}… on every request, GET stream open")
    return session


async def check_lost_session(
    client: Client, http: httpx2.AsyncClient, url: str, session: str
) -> None:
    """The server forgets the session (DELETE from another client): 404, and the SDK says so."""
    headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    deleted = await http.delete(url, headers=headers)
    expect_eq(deleted.status_code, 200, "DELETE the session")
    probe = await http.post(
        url,
        headers={**headers, "accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 99, "method": "ping"},
    )
    expect_eq(probe.status_code, 404, "a request on the deleted session")
    body = probe.json()
    expect_eq(body["error"]["message"], "Session not found", "404 body")
    try:
        with anyio.fail_after(20):
            await client.call_tool("test_simple_text", {})
    except MCPError as e:
        ok(f"the SDK reports the lost session: {e.code} {e.message}")
        return
    raise Mismatch("a call on a deleted session succeeded")


async def run(mode: str, kind: str, url: str) -> None:
    expect_eq(version("mcp"), PINNED_SDK, "installed mcp version")
    modern = mode != "legacy"
    log = HttpLog()
    host = Host(modern)
    info = Implementation(name="python-http-client", version=PINNED_SDK)
    timeout = httpx2.Timeout(30, read=300)
    async with httpx2.AsyncClient(
        timeout=timeout, event_hooks={"response": [log.on_response]}
    ) as http:
        if kind == "sse":
            transport = sse_client(url)
        else:
            transport = streamable_http_client(
                url, http_client=http, terminate_on_close=False
            )
        async with Client(
            transport,
            mode=mode,
            client_info=info,
            sampling_callback=host.sampling,
            elicitation_callback=host.elicitation,
            logging_callback=host.logging,
            log_level="info",
        ) as client:
            expect_eq(
                client.protocol_version, MODES[mode], "negotiated protocol version"
            )
            if mode != "2026-07-28":
                # A pinned version adopts a synthesized discover result: no serverInfo.
                expect_eq(
                    client.server_info.name, "oxmcp-conformance", "serverInfo.name"
                )
            ok(f"connected in mode {mode!r} on {client.protocol_version} ({kind})")
            await check_tools(client, log, modern, kind)
            if kind == "stateless" and not modern:
                await check_stateless_logging(client, host)
            elif kind == "json" and not modern:
                await client.set_logging_level("info")
                await client.call_tool("test_tool_with_logging", {})
                await host.expect_no_logs(client, "log messages with JSON answers")
                ok("JSON answers: the log messages of a request are dropped")
            else:
                await check_logging(client, host, modern)
            if kind == "stateless" and not modern:
                await check_no_back_channel(client, host)
            else:
                # A guard against a hang (a question lost on the way), not a timed assertion.
                with anyio.fail_after(15):
                    await check_sampling(client, host, modern)
                    await check_elicitation(client, host)
            expect_eq(host.asked, [], "unexpected questions")
            if kind != "sse":
                session = check_http(log, modern, kind)
                if session is not None:
                    await check_lost_session(client, http, url, session)


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in MODES or sys.argv[2] not in KINDS:
        print(
            f"usage: {sys.argv[0]} auto|legacy|2026-07-28 stateful|stateless|sse URL",
            file=sys.stderr,
        )
        return 2
    return run_checks(run, sys.argv[1], sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
