"""Drives oxmcp's example weather server with the official Python SDK client.

Usage: client.py MODE SERVER_COMMAND [ARG...]

MODE is the SDK client's own connect mode: "auto" (probe server/discover, fall back to
the initialize handshake), "legacy" (initialize only) or "2026-07-28" (adopt the
stateless revision with no probe at all). The script checks everything it receives and
exits non-zero with a MISMATCH line on stderr at the first difference;
core/tests/interop runs it.
"""

import sys
from importlib.metadata import version
from typing import Any

from checks import (
    PINNED_SDK,
    Mismatch,
    expect,
    expect_eq,
    ok,
    only_text,
    run_checks,
)
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import Implementation

# What each connect mode must end up on. Our server speaks every revision, so "auto"
# must find the stateless one; "legacy" always offers the newest handshake revision.
EXPECTED_VERSION = {
    "auto": "2026-07-28",
    "legacy": "2025-11-25",
    "2026-07-28": "2026-07-28",
}

# get_weather's schemas exactly as examples/rust/weather_server.rs declares them: the
# SDK keeps schemas as plain dicts, so this is what came over the wire.
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name, e.g. Beijing or 北京"}},
    "required": ["city"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature_c": {"type": "number"},
        "conditions": {"type": "string"},
        "humidity_pct": {"type": "integer"},
        "wind_kmh": {"type": "integer"},
    },
    "required": ["city", "temperature_c", "conditions", "humidity_pct", "wind_kmh"],
}
OSLO = {
    "city": "Oslo",
    "temperature_c": 4.0,
    "conditions": "light snow",
    "humidity_pct": 86,
    "wind_kmh": 12,
}
OSLO_TEXT = "Oslo: 4.0 °C, light snow, humidity 86%, wind 12 km/h"


async def tool_error(client: Client, arguments: dict[str, Any], what: str) -> str:
    """Calls get_weather expecting a tool-level failure (isError), returns its text."""
    result = await client.call_tool("get_weather", arguments)
    expect_eq(result.is_error, True, f"{what}: isError")
    expect_eq(result.structured_content, None, f"{what}: structuredContent")
    return only_text(result, what)


async def run(mode: str, command: list[str]) -> None:
    expect_eq(version("mcp"), PINNED_SDK, "installed mcp version")
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={"RUST_LOG": "warn"}
    )
    info = Implementation(name="python-interop-client", version=PINNED_SDK)
    async with Client(params, mode=mode, client_info=info) as client:
        # Negotiation: which era and revision the SDK settled on, and how.
        expect_eq(
            client.protocol_version,
            EXPECTED_VERSION[mode],
            "negotiated protocol version",
        )
        session = client.session
        if mode == "legacy":
            expect(
                session.initialize_result is not None,
                "legacy mode did not run initialize",
            )
            expect_eq(client.server_info.name, "weather", "serverInfo.name")
            expect_eq(
                client.instructions,
                "Current weather for a handful of world cities, from embedded data.",
                "instructions",
            )
        elif mode == "auto":
            discovered = session.discover_result
            expect(discovered is not None, "auto mode fell back to initialize")
            expect(session.initialize_result is None, "auto mode ran initialize too")
            expect(
                "2026-07-28" in discovered.supported_versions,
                "discover supportedVersions",
            )
            expect_eq(
                client.server_info.name, "weather", "discover _meta serverInfo.name"
            )
            expect(
                client.server_capabilities.tools is not None, "tools capability missing"
            )
        else:
            # A pinned modern version adopts a synthesized discover result: no probe
            # was sent, so the first request on the wire is tools/list.
            expect(session.initialize_result is None, "pinned mode ran initialize")
        ok(f"connected in mode {mode!r} on {client.protocol_version}")

        listed = await client.list_tools()
        expect_eq([t.name for t in listed.tools], ["get_weather"], "tool names")
        expect_eq(listed.next_cursor, None, "nextCursor")
        tool = listed.tools[0]
        expect_eq(
            tool.description, "Get the current weather for a city.", "description"
        )
        expect_eq(tool.input_schema, INPUT_SCHEMA, "inputSchema")
        expect_eq(tool.output_schema, OUTPUT_SCHEMA, "outputSchema")
        expect(tool.annotations is not None, "annotations missing")
        expect_eq(tool.annotations.title, "Current weather", "annotations.title")
        expect_eq(tool.annotations.read_only_hint, True, "annotations.readOnlyHint")
        expect_eq(tool.annotations.open_world_hint, False, "annotations.openWorldHint")
        ok("tools/list")

        # The SDK also validates structuredContent against the listed outputSchema here.
        result = await client.call_tool("get_weather", {"city": "Oslo"})
        expect(not result.is_error, f"get_weather Oslo failed: {result!r}")
        expect_eq(
            only_text(result, "get_weather Oslo"), OSLO_TEXT, "get_weather Oslo text"
        )
        expect_eq(result.structured_content, OSLO, "get_weather Oslo structuredContent")
        ok("tools/call get_weather Oslo")

        text = await tool_error(client, {"city": "Atlantis"}, "unknown city")
        expect(
            text.startswith("No weather data for `Atlantis`"),
            f"unknown city text: {text!r}",
        )
        ok("unknown city is a tool error")

        # Bad arguments are tool results with isError (2025-11-25 behaviour), in every
        # era.
        for arguments, why in [
            ({"city": 42}, "wrong type"),
            ({}, "missing required argument"),
            ({"city": "Oslo", "units": "F"}, "extra argument"),
        ]:
            text = await tool_error(client, arguments, why)
            expect(
                text.startswith("Invalid arguments for tool `get_weather`"),
                f"{why}: text {text!r}",
            )
            ok(f"{why} is a tool error")

        # An unknown tool is a protocol error, not a tool result.
        try:
            await client.call_tool("get_forecast", {"city": "Oslo"})
        except MCPError as e:
            expect_eq(e.code, -32602, "unknown tool error code")
            expect_eq(
                e.message, "Unknown tool: get_forecast", "unknown tool error message"
            )
        else:
            raise Mismatch("calling an unknown tool succeeded")
        ok("unknown tool is JSON-RPC -32602")


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in EXPECTED_VERSION:
        print(
            f"usage: {sys.argv[0]} auto|legacy|2026-07-28 SERVER_COMMAND [ARG...]",
            file=sys.stderr,
        )
        return 2
    return run_checks(run, sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
