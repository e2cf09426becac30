"""Drives oxmcp's conformance server over WebSocket with the official Python SDK 1.x client
(`mcp.client.websocket.websocket_client`), for core/tests/interop/ws.rs.

Usage: ws_client.py URL [SERVER_NAME]

SERVER_NAME (default "oxmcp-conformance") is the `serverInfo.name` the server must report. The
script checks everything it receives, prints an `ok:` line per step and ends with
"all checks passed", or exits 1 with a MISMATCH line on stderr at the first difference.
"""

import sys
import warnings
from importlib.metadata import version
from typing import Any

# The SDK marks its WebSocket transport deprecated (it was never part of the spec).
warnings.filterwarnings(
    "ignore",
    category=DeprecationWarning,
    message="The WebSocket (client|server) transport is deprecated",
)

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.websocket import websocket_client  # noqa: E402
from mcp.shared.context import RequestContext  # noqa: E402
from mcp.types import (  # noqa: E402
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    TextContent,
)

# The release pinned in tests/interop/python-ws/requirements.txt.
PINNED_SDK = "1.30.0"


class Mismatch(Exception):
    """What the server sent differs from what the test expects."""


def expect_eq(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise Mismatch(f"{what}: expected {expected!r}, got {actual!r}")


def ok(step: str) -> None:
    print(f"ok: {step}", flush=True)


def text_of(result: Any, what: str) -> str:
    expect_eq(len(result.content), 1, f"{what}: number of content blocks")
    block = result.content[0]
    if not isinstance(block, TextContent):
        raise Mismatch(f"{what}: content is {block!r}, not text")
    return block.text


async def sampling(
    _context: RequestContext[ClientSession, Any], params: CreateMessageRequestParams
) -> CreateMessageResult:
    asked = params.messages[0].content
    prompt = asked.text if isinstance(asked, TextContent) else "?"
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=f"echo: {prompt}"),
        model="python-ws-test-model",
        stopReason="endTurn",
    )


async def elicitation(
    _context: RequestContext[ClientSession, Any], params: ElicitRequestParams
) -> ElicitResult:
    return ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


async def drive(url: str, server_name: str) -> None:
    expect_eq(version("mcp"), PINNED_SDK, "the installed SDK")
    async with websocket_client(url) as (read, write):
        async with ClientSession(
            read, write, sampling_callback=sampling, elicitation_callback=elicitation
        ) as session:
            init = await session.initialize()
            expect_eq(init.serverInfo.name, server_name, "serverInfo.name")
            ok(f"connected on {init.protocolVersion}")
            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            for needed in ["test_simple_text", "test_tool_with_progress", "test_sampling"]:
                expect_eq(needed in names, True, f"tools/list has {needed}")
            ok(f"{len(names)} tools listed")

            result = await session.call_tool("test_simple_text", {})
            expect_eq(
                text_of(result, "test_simple_text"),
                "This is a simple text response for testing.",
                "test_simple_text",
            )
            ok("text result")

            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            result = await session.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            expect_eq(
                text_of(result, "test_tool_with_progress"),
                "Tool with progress executed successfully",
                "test_tool_with_progress",
            )
            expect_eq(seen, [0.0, 50.0, 100.0], "progress seen")
            ok("progress")

            result = await session.call_tool("test_sampling", {"prompt": "What is 2+2?"})
            expect_eq(
                text_of(result, "test_sampling"),
                "LLM response: echo: What is 2+2?",
                "test_sampling",
            )
            ok("sampling")

            result = await session.call_tool("test_elicitation", {"message": "Who are you?"})
            expect_eq(
                text_of(result, "test_elicitation"),
                'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
                "test_elicitation",
            )
            ok("elicitation")

            result = await session.call_tool("test_error_handling", {})
            expect_eq(result.isError, True, "test_error_handling isError")
            ok("tool error")
    print("all checks passed", flush=True)


def mismatch_in(error: BaseException) -> Mismatch | None:
    """The Mismatch an error is or carries (the SDK's task groups wrap it in groups)."""
    if isinstance(error, Mismatch):
        return error
    for inner in getattr(error, "exceptions", ()):
        found = mismatch_in(inner)
        if found is not None:
            return found
    return None


def main() -> int:
    url = sys.argv[1]
    server_name = sys.argv[2] if len(sys.argv) > 2 else "oxmcp-conformance"
    try:
        anyio.run(drive, url, server_name)
    except Exception as e:
        mismatch = mismatch_in(e)
        if mismatch is None:
            raise
        print(f"MISMATCH: {mismatch}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
