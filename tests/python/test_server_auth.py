"""`serve_http(auth=verify_token)`: a Python verifier behind the core's OAuth resource server.
Real HTTP on 127.0.0.1: no token and unknown tokens get 401 with `WWW-Authenticate` naming the
protected-resource metadata, a token without the required scope 403, a good token is served
(also through oxmcp's own client), and a verifier that raises or returns nonsense costs that
request a 401, never the server."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import oxmcp
import pytest
from conftest import raw_initialize
from oxmcp.types import AccessClaims

AUTH_SERVER = "https://auth.example.com"
INIT = raw_initialize("auth-test", "1")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def claims_for(token: str, resource: str) -> AccessClaims | None:
    if token == "good":
        return {"subject": "alice", "scopes": "mcp:read mcp:write", "audience": resource}
    if token == "read-only-elsewhere":
        return {"subject": "bob", "scopes": ["other"], "audience": [resource]}
    if token == "expired":
        return {"subject": "carol", "scopes": ["mcp:read"], "audience": resource, "expires_at": 1}
    if token == "foreign":
        return {"subject": "dave", "scopes": ["mcp:read"], "audience": "https://other.example/"}
    if token == "boom":
        raise RuntimeError("the token database is down")
    if token == "nonsense":
        return 42  # type: ignore[return-value]
    return None


def post(url: str, token: str | None, body: Any = INIT) -> tuple[int, dict[str, str], str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, r.read().decode()


@pytest.fixture(params=["def", "async def"])
async def protected(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    server = oxmcp.Server("protected")

    @server.tool()
    def whoami() -> str:
        return "served"

    if request.param == "def":

        def verify(token: str) -> AccessClaims | None:
            return claims_for(token, resource)

        verifier: Any = verify
    else:

        async def verify_async(token: str) -> AccessClaims | None:
            await asyncio.sleep(0)
            return claims_for(token, resource)

        verifier = verify_async
    http = await server.serve_http(
        port=port,
        auth=verifier,
        authorization_servers=[AUTH_SERVER],
        required_scopes=["mcp:read"],
    )
    try:
        assert http.url == resource
        yield http.url
    finally:
        await http.shutdown()


async def test_no_token_is_401_with_the_metadata_url(protected: str) -> None:
    status, headers, _ = await asyncio.to_thread(post, protected, None)
    assert status == 401
    challenge = headers.get("WWW-Authenticate") or headers.get("www-authenticate") or ""
    assert challenge.startswith("Bearer ")
    metadata = protected.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert f'resource_metadata="{metadata}"' in challenge
    assert 'scope="mcp:read"' in challenge
    status, body = await asyncio.to_thread(get, metadata)
    assert status == 200
    doc = json.loads(body)
    assert doc["resource"] == protected
    assert doc["authorization_servers"] == [AUTH_SERVER]


@pytest.mark.parametrize("token", ["unknown", "expired", "foreign", "boom", "nonsense"])
async def test_invalid_tokens_are_401(protected: str, token: str) -> None:
    status, headers, _ = await asyncio.to_thread(post, protected, token)
    assert status == 401
    challenge = headers.get("WWW-Authenticate") or headers.get("www-authenticate") or ""
    assert 'error="invalid_token"' in challenge
    # The server is unharmed: the next good request is served.
    status, _, body = await asyncio.to_thread(post, protected, "good")
    assert status == 200, body


async def test_missing_scope_is_403(protected: str) -> None:
    status, headers, _ = await asyncio.to_thread(post, protected, "read-only-elsewhere")
    assert status == 403
    challenge = headers.get("WWW-Authenticate") or headers.get("www-authenticate") or ""
    assert 'error="insufficient_scope"' in challenge


async def test_good_token_is_served_through_oxmcp_client(protected: str) -> None:
    status, _, body = await asyncio.to_thread(post, protected, "good")
    assert status == 200
    assert "protocolVersion" in body
    async with oxmcp.Client.http(protected, headers={"Authorization": "Bearer good"}) as c:
        r = await c.call_tool("whoami")
        assert r["content"][0]["text"] == "served"
    with pytest.raises(oxmcp.McpError):
        async with oxmcp.Client.http(protected, headers={"Authorization": "Bearer nope"}) as c:
            await c.list_tools()


async def test_bad_auth_configuration_is_refused_before_listening() -> None:
    server = oxmcp.Server("misconfigured")

    def verify(token: str) -> AccessClaims | None:
        return None

    # port 0: the resource URL (the tokens' audience) cannot be known in advance.
    with pytest.raises(oxmcp.InvalidArgumentError, match="resource="):
        await server.serve_http(auth=verify, authorization_servers=[AUTH_SERVER])
    with pytest.raises(oxmcp.InvalidArgumentError, match="authorization server"):
        await server.serve_http(port=free_port(), auth=verify)
    with pytest.raises(oxmcp.InvalidArgumentError, match="absolute URL"):
        await server.serve_http(auth=verify, resource="/mcp", authorization_servers=[AUTH_SERVER])
    # Nothing was left bound: the same server still serves.
    http = await server.serve_http()
    await http.shutdown()


def test_verifier_that_blocks_does_not_block_the_loop_forever() -> None:
    # A sync verifier runs on a worker thread, so a slow one only delays its own request.
    async def main() -> None:
        port = free_port()
        server = oxmcp.Server("slow")
        resource = f"http://127.0.0.1:{port}/mcp"

        def slow(token: str) -> AccessClaims | None:
            time.sleep(0.2)
            return claims_for(token, resource)

        http = await server.serve_http(
            port=port, auth=slow, authorization_servers=[AUTH_SERVER], required_scopes=["mcp:read"]
        )
        try:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.01)

            t = asyncio.create_task(ticker())
            status, _, _ = await asyncio.to_thread(post, resource, "good")
            t.cancel()
            assert status == 200
            assert ticks > 1  # the loop kept running while the verifier slept
        finally:
            await http.shutdown()

    asyncio.run(main())
