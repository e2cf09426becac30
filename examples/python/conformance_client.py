"""The conformance client on oxmcp's Python API: what the official suite's client scenarios
drive (the same behaviour as examples/rust/conformance_client.rs).

``python conformance_client.py URL``, with the scenario in ``MCP_CONFORMANCE_SCENARIO`` (the
harness sets it and appends the URL of its mock server). Exits non-zero when the scenario fails
on our side.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from oxmcp import Client, OAuth


def text_of(result: Any) -> str:
    return " ".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


async def all_tools(client: Client) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page = await client.list_tools(cursor)
        tools.extend(page["tools"])
        cursor = page.get("nextCursor")
        if not cursor or cursor in seen:
            return tools
        seen.add(cursor)


def oauth(context: dict[str, Any]) -> OAuth:
    """The OAuth settings an `auth/*` scenario's context asks for (as the Rust client does):
    a client ID metadata document URL offered always, loopback allowed for the harness's
    mock authorization server, the redirects followed headlessly (it auto-approves)."""
    base: dict[str, Any] = {
        "client_name": "oxmcp-conformance-client",
        "redirect_uri": "http://localhost:3000/callback",
        "client_metadata_url": "https://conformance-test.local/client-metadata.json",
        "allow_loopback": True,
    }

    def need(key: str) -> str:
        value = context.get(key)
        if not isinstance(value, str):
            raise SystemExit(f"context: no {key}")
        return value

    # 0.1.16 names no context for the SEP-990 scenario; its fields say what it is.
    if isinstance(context.get("idp_id_token"), str):
        return OAuth(
            **base,
            grant="enterprise",
            idp_token_endpoint=need("idp_token_endpoint"),
            idp_client_id=need("idp_client_id"),
            idp_id_token=need("idp_id_token"),
            client_id=need("client_id"),
            client_secret=need("client_secret"),
        )
    name = context.get("name")
    if name == "auth/pre-registration":
        return OAuth(
            **base, client_id=need("client_id"), client_secret=context.get("client_secret")
        )
    if name == "auth/client-credentials-basic":
        return OAuth(
            **base,
            grant="client_credentials",
            client_id=need("client_id"),
            client_secret=need("client_secret"),
        )
    if name == "auth/client-credentials-jwt":
        return OAuth(
            **base,
            grant="client_credentials",
            client_id=need("client_id"),
            private_key_pem=need("private_key_pem"),
        )
    return OAuth(**base)


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "") or "{}")
    except json.JSONDecodeError:
        context = {}
    if not isinstance(context, dict):
        context = {}
    auth = oauth(context) if scenario.startswith("auth/") else None

    # Accept with no values: the core fills in the schema's defaults (SEP-1034).
    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async with Client.http(
        url, auth=auth, name="oxmcp-conformance-client", elicitation_callback=elicit
    ) as client:
        print(
            f"connected: protocol {client.protocol_version}, "
            f"server {client.server['serverInfo'].get('name')!r}",
            file=sys.stderr,
        )
        tools = await all_tools(client)
        names = {t["name"] for t in tools}
        if scenario == "initialize":
            pass
        elif scenario == "tools_call":
            r = await client.call_tool("add_numbers", {"a": 5, "b": 3})
            print(f"add_numbers: {text_of(r)}", file=sys.stderr)
        elif scenario == "elicitation-sep1034-client-defaults":
            r = await client.call_tool("test_client_elicitation_defaults", {})
            print(f"elicitation: {text_of(r)}", file=sys.stderr)
        elif scenario == "json-schema-2020-12-preservation":
            focal = next((t for t in tools if t["name"] == "json_schema_2020_12_tool"), None)
            if focal is None:
                raise SystemExit("server did not list json_schema_2020_12_tool")
            r = await client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})
            print(f"json_schema_echo: {text_of(r)}", file=sys.stderr)
        elif scenario == "sse-retry":
            r = await client.call_tool("test_reconnection", {})
            print(f"reconnection: {text_of(r)}", file=sys.stderr)
        else:
            # The harness may say which calls to make; otherwise call every listed tool
            # without arguments, the most any client can do.
            calls = context.get("toolCalls")
            if isinstance(calls, list):
                planned = [
                    (c["name"], c.get("arguments") or {})
                    for c in calls
                    if isinstance(c, dict) and isinstance(c.get("name"), str)
                ]
            else:
                planned = [(t["name"], {}) for t in tools]
            for name, arguments in planned:
                if name not in names:
                    print(
                        f"{name}: not offered by the server (or refused), not called",
                        file=sys.stderr,
                    )
                    continue
                r = await client.call_tool(name, arguments)
                print(f"{name}: {text_of(r)}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: conformance_client.py URL")
    asyncio.run(main(sys.argv[1]))
