"""oxmcp.OAuth: settings the core refuses are typed errors before any request, and a 401
pointing discovery at a loopback address is refused (never fetched) unless loopback is
allowed. The whole flow against a real authorization server is the conformance suite's
`auth/*` scenarios (make python-conformance)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import oxmcp
import pytest
from oxmcp import OAuth


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[tuple[str, list[str]]]:
    """Serves ``handler`` (a class with a ``seen`` list of the paths asked) on a loopback port
    for the length of a ``with``: the MCP endpoint's URL and what was asked."""
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"seen": seen}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class _Protected(BaseHTTPRequestHandler):
    """An MCP endpoint that always answers 401 and names its metadata on this server."""

    seen: list[str]

    def _answer(self) -> None:
        self.seen.append(self.path)
        port = self.server.server_address[1]
        meta = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource"
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer resource_metadata="{meta}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def protected() -> Iterator[tuple[str, list[str]]]:
    with _serving(_Protected) as served:
        yield served


async def test_discovery_on_loopback_is_refused_without_a_fetch(
    protected: tuple[str, list[str]],
) -> None:
    url, seen = protected
    with pytest.raises(oxmcp.McpError) as info:
        await oxmcp.Client.http(url, auth=OAuth(client_id="app"), timeout=20)
    assert "loopback" in str(info.value) or "private" in str(info.value), info.value
    assert seen and all(not p.startswith("/.well-known") for p in seen), seen


async def test_with_loopback_allowed_discovery_runs_and_fails_cleanly(
    protected: tuple[str, list[str]],
) -> None:
    url, seen = protected
    with pytest.raises(oxmcp.AuthError):
        await oxmcp.Client.http(url, auth=OAuth(client_id="app", allow_loopback=True), timeout=20)
    # It did look (the metadata answers 401 too, so the flow stops there).
    assert any(p.startswith("/.well-known/oauth-protected-resource") for p in seen), seen


async def test_without_auth_a_401_is_a_typed_error(protected: tuple[str, list[str]]) -> None:
    url, _ = protected
    with pytest.raises(oxmcp.McpError):
        await oxmcp.Client.http(url, timeout=20)


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        (
            OAuth(client_id="a", token_endpoint_auth="magic"),  # type: ignore[arg-type]
            r"unknown token_endpoint_auth `magic` \(one of: none, client_secret_basic",
        ),
        (OAuth(client_secret="s"), "client_secret without client_id"),
        (OAuth(token_endpoint_auth="none"), "token_endpoint_auth without client_id"),
        (
            OAuth(grant="password"),  # type: ignore[arg-type]
            r"unknown grant `password` \(one of: authorization_code",
        ),
        (OAuth(grant="enterprise"), "the enterprise grant needs idp_token_endpoint"),
        (
            OAuth(grant="enterprise", idp_token_endpoint="https://idp.example/t"),
            "needs idp_client_id",
        ),
        (OAuth(client_id=5), "invalid type"),  # type: ignore[arg-type]
        (OAuth(allow_loopback="yes"), "invalid type"),  # type: ignore[arg-type]
        (OAuth(redirect_uri="javascript:alert(1)"), "redirect_uri"),
        (OAuth(redirect_uri="http://localhost/cb\r\nX-Evil: 1"), "redirect_uri"),
        (OAuth(authorizer="not callable"), "authorizer"),  # type: ignore[arg-type]
        (OAuth(private_key_pem="not a key"), "(?i)key|pem"),
    ],
)
async def test_bad_settings_are_refused_before_any_request(auth: OAuth, message: str) -> None:
    # Port 9 (discard) on loopback: nothing may be sent there before the settings are read.
    with pytest.raises(oxmcp.McpError, match=message):
        await oxmcp.Client.http("http://127.0.0.1:9/mcp", auth=auth, timeout=5)


def test_secrets_stay_out_of_the_repr() -> None:
    auth = OAuth(client_id="app", client_secret="s3cret-XYZ", idp_id_token="id-QQQ")
    assert "s3cret-XYZ" not in repr(auth)
    assert "id-QQQ" not in repr(auth)


class _WithMetadata(_Protected):
    """The same endpoint, plus protected-resource and authorization-server metadata on this
    server, so the flow reaches the user step (the authorizer)."""

    def do_GET(self) -> None:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            body: dict[str, Any] = {"resource": f"{base}/mcp", "authorization_servers": [base]}
        elif self.path.startswith("/.well-known/oauth-authorization-server"):
            body = {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
        else:
            return self._answer()
        self.seen.append(self.path)
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def with_metadata() -> Iterator[str]:
    with _serving(_WithMetadata) as (url, _):
        yield url


async def test_the_authorizer_gets_a_pkce_url_and_its_failure_is_an_auth_error(
    with_metadata: str,
) -> None:
    asked: list[str] = []

    async def authorizer(url: str) -> str:
        asked.append(url)
        raise RuntimeError("the user closed the browser")

    auth = OAuth(client_id="app", authorizer=authorizer, allow_loopback=True)
    with pytest.raises(oxmcp.AuthError, match="the user closed the browser"):
        await oxmcp.Client.http(with_metadata, auth=auth, timeout=20)
    (url,) = asked
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(with_metadata.removesuffix("/mcp") + "/authorize?")
    assert query["client_id"] == ["app"] and query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["state"][0] and query["resource"] == [with_metadata]


async def test_an_authorizer_that_returns_junk_is_an_auth_error(with_metadata: str) -> None:
    def returns_number(url: str) -> Any:
        return 42

    def wrong_state(url: str) -> str:
        return "http://localhost:3000/callback?code=abc&state=forged"

    for authorizer, why in ((returns_number, "as a string"), (wrong_state, "state")):
        auth = OAuth(client_id="app", authorizer=authorizer, allow_loopback=True)
        with pytest.raises(oxmcp.AuthError, match=why):
            await oxmcp.Client.http(with_metadata, auth=auth, timeout=20)


class _FullFlow(_WithMetadata):
    """An MCP endpoint behind a complete (auto-approving) authorization server: metadata,
    `/token` for the authorization code, and MCP answers for the token it issued."""

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path == "/token":
            self.seen.append("/token")
            form = parse_qs(raw.decode())
            ok = (
                form.get("grant_type") == ["authorization_code"]
                and form.get("code") == ["abc"]
                and form.get("code_verifier")
                and form.get("client_id") == ["app"]
            )
            if not ok:
                return self._json(400, {"error": "invalid_grant"})
            return self._json(
                200, {"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600}
            )
        if self.headers.get("Authorization") != "Bearer tok-1":
            return self._answer()
        self.seen.append("mcp with token")
        message = json.loads(raw)
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        result: dict[str, Any]
        if message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mini", "version": "1"},
            }
        elif message["method"] == "tools/list":
            result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        else:
            return self._json(
                200,
                {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "?"}},
            )
        return self._json(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    def do_GET(self) -> None:
        if self.path == "/mcp" and self.headers.get("Authorization") == "Bearer tok-1":
            self.send_response(405)  # no GET stream here
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/.well-known/oauth-authorization-server"):
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            self.seen.append(self.path)
            return self._json(
                200,
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token",
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                },
            )
        return super().do_GET()

    def do_DELETE(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def full_flow() -> Iterator[tuple[str, list[str]]]:
    with _serving(_FullFlow) as served:
        yield served


class DictStore:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []

    def load(self, key: str) -> dict[str, Any] | None:
        self.calls.append("load")
        return self.data.get(key)

    def save(self, key: str, value: dict[str, Any]) -> None:
        self.calls.append("save")
        self.data[key] = value

    def remove(self, key: str) -> None:
        self.calls.append("remove")
        self.data.pop(key, None)


async def test_a_python_authorizer_and_token_store_carry_the_whole_flow(
    full_flow: tuple[str, list[str]],
) -> None:
    url, seen = full_flow
    asked: list[str] = []

    def authorizer(auth_url: str) -> str:
        # The user step, done by hand: approve and come back with the code and the state.
        asked.append(auth_url)
        state = parse_qs(urlsplit(auth_url).query)["state"][0]
        return f"http://localhost:3000/callback?code=abc&state={state}"

    store = DictStore()
    auth = OAuth(client_id="app", authorizer=authorizer, token_store=store, allow_loopback=True)
    async with oxmcp.Client.http(url, auth=auth, protocol_version="2025-11-25", timeout=20) as c:
        assert [t["name"] for t in (await c.list_tools())["tools"]] == ["t"]
    assert len(asked) == 1 and "/token" in seen and "mcp with token" in seen
    (saved,) = store.data.values()
    assert saved["tokens"]["access_token"] == "tok-1"
    assert "save" in store.calls
    # A second client with the same store uses the stored token: no user step again.
    async with oxmcp.Client.http(url, auth=auth, protocol_version="2025-11-25", timeout=20) as c:
        assert (await c.list_tools())["tools"]
    assert len(asked) == 1


async def test_a_token_store_that_fails_is_an_auth_error(
    full_flow: tuple[str, list[str]],
) -> None:
    url, _ = full_flow

    class Broken(DictStore):
        def load(self, key: str) -> dict[str, Any] | None:
            raise OSError("keyring locked")

    auth = OAuth(client_id="app", token_store=Broken(), allow_loopback=True)
    with pytest.raises(oxmcp.AuthError, match="keyring locked"):
        await oxmcp.Client.http(url, auth=auth, protocol_version="2025-11-25", timeout=20)

    class Junk(DictStore):
        def load(self, key: str) -> dict[str, Any] | None:
            return {"tokens": 5}

    auth = OAuth(client_id="app", token_store=Junk(), allow_loopback=True)
    with pytest.raises(oxmcp.AuthError, match="load"):
        await oxmcp.Client.http(url, auth=auth, protocol_version="2025-11-25", timeout=20)
    for bad in (
        OAuth(token_store=object()),  # type: ignore[arg-type]
        OAuth(token_store=DictStore(), token_dir="/tmp"),
    ):
        with pytest.raises(oxmcp.InvalidArgumentError, match="token_"):
            await oxmcp.Client.http(url, auth=bad, timeout=5)
