"""A host that is safe by default, from Python: ``run_agent(approve=...)`` with ``def`` and
``async def`` callbacks and every kind of answer, the config's tool filters, list entries that
do not parse reported in ``status()``, and a pinned revision (``protocol_version`` / ``era``)
on ``Client.stdio``. The server is the hand-written old server of the Rust suite
(``core/tests/host_safety/old_server.py``): it ignores ``server/discover`` and logs every
message it gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oxmcp
import pytest
from conftest import PY, REPO
from oxmcp.host import ApprovalRequest

OLD_SERVER = REPO / "core" / "tests" / "host_safety" / "old_server.py"
GO = [{"role": "user", "content": "go"}]


def old_server(log: Path, **extra: Any) -> dict[str, Any]:
    # Pinned: the old server ignores the probe, which would cost 10 s a start.
    entry = {"command": PY, "args": [str(OLD_SERVER), str(log)], "era": "handshake"}
    return {"mcpServers": {"old": {**entry, **extra}}}


def methods(log: Path) -> list[str]:
    return [line.split(" ", 2)[1] for line in log.read_text().splitlines()]


def calls(log: Path) -> list[tuple[str, Any]]:
    out = []
    for line in log.read_text().splitlines():
        _pid, method, params = line.split(" ", 2)
        if method == "tools/call":
            p = json.loads(params)
            out.append((p["name"], p["arguments"]))
    return out


def calling(*names_and_args: tuple[str, dict[str, Any]]) -> Any:
    """A model that makes these calls in its first turn, then answers."""

    def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        if len(messages) > 1:
            return {"role": "assistant", "content": "done"}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(names_and_args)
            ],
        }

    return model


async def test_approve_allows_denies_edits_and_is_skipped_for_read_only_and_always_allow(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    asked: list[ApprovalRequest] = []

    def approve(call: ApprovalRequest) -> bool | str | dict[str, Any]:
        asked.append(call)
        if call["tool"] == "wipe":
            return "not my files"
        if call["arguments"].get("path") == "/etc/passwd":
            return False
        if call["tool"] == "write":
            return {"path": "/tmp/safe"}
        return True

    model = calling(
        ("old__peek", {"path": "/a"}),
        ("old__wipe", {"path": "/"}),
        ("old__write", {"path": "/home/me"}),
        ("old__write", {"path": "/etc/passwd"}),
        ("old__secret", {}),
        ("old__snake", {"path": "/b"}),
    )
    async with oxmcp.Host.from_config(old_server(log, alwaysAllow=["secret"])) as host:
        transcript = await host.run_agent(model, GO, approve=approve)
    assert sorted(c["tool"] for c in asked) == ["snake", "wipe", "write", "write"]
    wipe = next(c for c in asked if c["tool"] == "wipe")
    assert wipe["server"] == "old" and wipe["arguments"] == {"path": "/"}
    assert wipe["annotations"] is not None and wipe["annotations"]["destructiveHint"] is True
    assert sorted(calls(log)) == [
        ("peek", {"path": "/a"}),
        ("secret", {}),
        ("snake", {"path": "/b"}),
        ("write", {"path": "/tmp/safe"}),
    ]
    by_tool = {(c["tool"], c["arguments"].get("path")): c for c in transcript["calls"]}
    declined = by_tool[("wipe", "/")]
    assert declined["is_error"] and "The user declined" in declined["text"]
    assert "not my files" in declined["text"]
    assert by_tool[("write", "/etc/passwd")]["is_error"]
    assert not by_tool[("peek", "/a")]["is_error"]
    assert transcript["final_text"] == "done"


async def test_an_async_approve_and_one_that_raises_or_answers_nonsense(tmp_path: Path) -> None:
    log = tmp_path / "log"
    model = calling(("old__wipe", {"path": "/x"}))

    async def says_yes(call: ApprovalRequest) -> bool:
        return True

    def raises(call: ApprovalRequest) -> bool:
        raise RuntimeError("the dialog crashed")

    def nonsense(call: ApprovalRequest) -> Any:
        return 42

    def forgets(call: ApprovalRequest) -> None:
        return None

    async with oxmcp.Host.from_config(old_server(log)) as host:
        ran = await host.run_agent(model, GO, approve=says_yes)
        assert not ran["calls"][0]["is_error"] and len(calls(log)) == 1
        for approve, why in [
            (raises, "the dialog crashed"),
            (nonsense, "not `42`"),
            (forgets, "declined"),
        ]:
            t = await host.run_agent(model, GO, approve=approve)
            assert t["calls"][0]["is_error"] and why in t["calls"][0]["text"], t["calls"]
        assert len(calls(log)) == 1, "nothing more reached the server"
        with pytest.raises(oxmcp.InvalidArgumentError, match="approve must be a callable"):
            await host.run_agent(model, GO, approve="yes")  # type: ignore[arg-type]


async def test_hidden_tools_are_not_listed_nor_called_and_bad_entries_are_reported(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    config = old_server(log, excludeTools=["secret"], disabledTools=["crash"])
    async with oxmcp.Host.from_config(config) as host:
        tools = await host.tools()
        assert [t["name"] for t in tools["old"]] == ["peek", "wipe", "write", "snake"]
        with pytest.raises(oxmcp.RpcError, match="Unknown tool: secret") as hidden:
            await host.call_tool("old", "secret")
        with pytest.raises(oxmcp.RpcError, match="Unknown tool: nope") as missing:
            await host.call_tool("old", "nope")
        assert hidden.value.code == missing.value.code == -32602
        assert [name for name, _ in calls(log)] == ["nope"]
        await host.resources()
        await host.prompts()
        [status] = await host.status()
    skipped = [(s["list"], s.get("name"), s["field"]) for s in status.get("skipped", [])]
    assert skipped == [
        ("tools", "broken", "inputSchema"),
        ("resources", "file:///bad.txt", "name"),
        ("prompts", "bad", "arguments"),
    ]
    assert [(r["name"], r["field"]) for r in status.get("repaired", [])] == [
        ("snake", "input_schema")
    ]


async def test_a_pinned_client_skips_the_probe_and_a_bad_pin_is_refused(tmp_path: Path) -> None:
    for kwargs, spoken in [
        ({"era": "handshake"}, "2025-11-25"),
        ({"protocol_version": "2025-03-26"}, "2025-03-26"),
    ]:
        log = tmp_path / f"log-{spoken}"
        async with oxmcp.Client.stdio(PY, [str(OLD_SERVER), str(log)], **kwargs) as client:
            assert client.protocol_version == spoken
            page = await client.list_tools()
            assert [t["name"] for t in page["tools"]][:2] == ["peek", "wipe"]
        assert "server/discover" not in methods(log)
        assert methods(log)[0] == "initialize"
    for kwargs in [
        {"era": "modern"},
        {"protocol_version": "1999-01-01"},
        {"era": "stateless", "protocol_version": "2026-07-28"},
    ]:
        with pytest.raises(oxmcp.InvalidArgumentError, match="protocol_version / era"):
            async with oxmcp.Client.stdio(PY, [str(OLD_SERVER), str(tmp_path / "x")], **kwargs):
                pass
