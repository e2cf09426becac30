"""oxmcp.Host against real servers started from one config: our weather example and the
`everything` fixture as stdio children, next to servers that do not exist, crash at start or
crash mid-call; and the agent loop with a scripted Python model driving real tool calls."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import oxmcp
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WEATHER_SRC = REPO / "examples" / "python" / "weather-server" / "src"
WEATHER = [
    "-c",
    f"import sys; sys.path.insert(0, {str(WEATHER_SRC)!r}); import oxmcp_weather; "
    "oxmcp_weather.main()",
]
EVERYTHING = HERE / "servers" / "everything.py"
CRASHY = HERE / "servers" / "crashy.py"
PY = sys.executable


def config(**extra: Any) -> dict[str, Any]:
    servers: dict[str, Any] = {
        "weather": {"command": PY, "args": WEATHER},
        "everything": {"command": PY, "args": [str(EVERYTHING)]},
    }
    servers.update(extra)
    return {"mcpServers": servers}


async def test_a_config_file_starts_every_server_with_namespaced_tools(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config()))
    async with oxmcp.Host.from_config(path) as host:
        assert host.server_names == ["weather", "everything"]
        status = {s["name"]: s for s in await host.status()}
        assert status["weather"]["state"] == "connected"
        assert status["everything"]["state"] == "connected"
        tools = await host.tools()
        assert [t["name"] for t in tools["weather"]] == ["get_weather"]
        assert "add" in {t["name"] for t in tools["everything"]}
        t = await host.translate("openai")
        assert t.names["weather__get_weather"] == {"server": "weather", "tool": "get_weather"}
        assert "everything__add" in t.names
        result = await host.call_tool("weather", "get_weather", {"city": "北京"})
        assert result["structuredContent"]["city"] == "Beijing"
        assert not result.get("isError")
        failed = await host.call_tool("weather", "get_weather", {"city": "Atlantis"})
        assert failed["isError"] is True


async def test_dead_and_crashing_servers_leave_the_others_working() -> None:
    bad = {
        "missing": {"command": "/nonexistent/oxmcp-no-such-server"},
        "crashes": {
            "command": PY,
            "args": ["-c", "import sys; print('boom: no config', file=sys.stderr); sys.exit(2)"],
        },
        "silent": {"command": PY, "args": ["-c", "import time; time.sleep(60)"], "timeout": 2},
    }
    async with oxmcp.Host.from_config(config(**bad), connect_timeout=20) as host:
        status = {s["name"]: s for s in await host.status()}
        assert status["weather"]["state"] == "connected"
        assert status["everything"]["state"] == "connected"
        for name in bad:
            assert status[name]["state"] == "failed", status[name]
            assert status[name]["error"]
        assert status["missing"]["error_kind"] == "spawn"
        assert "boom: no config" in status["crashes"].get("stderr", "")
        assert status["silent"]["error_kind"] == "timeout"
        assert set(await host.tools()) == {"weather", "everything"}
        result = await host.call_tool("weather", "get_weather", {"city": "Oslo"})
        assert not result.get("isError")
        # A call to a server that failed tries to start it again, and says why it cannot.
        with pytest.raises(oxmcp.SpawnError, match="oxmcp-no-such-server"):
            await host.call_tool("missing", "anything", {})
        with pytest.raises(oxmcp.McpError, match="nobody"):
            await host.call_tool("nobody", "anything", {})


async def test_a_server_that_crashes_mid_call_starts_again_on_the_next_call() -> None:
    cfg = {"mcpServers": {"crashy": {"command": PY, "args": [str(CRASHY)]}}}
    async with oxmcp.Host.from_config(cfg) as host:
        first = await host.call_tool("crashy", "hello", {"name": "a"})
        with pytest.raises(oxmcp.ConnectionClosedError):
            await host.call_tool("crashy", "die", {})
        (status,) = await host.status()
        assert status["state"] == "failed"
        second = await host.call_tool("crashy", "hello", {"name": "b"})
        pid = lambda r: r["content"][0]["text"].rsplit(" ", 1)[1]  # noqa: E731
        assert pid(first) != pid(second)
        (status,) = await host.status()
        assert status["state"] == "connected" and status["restarts"] == 1


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        ({"mcpServers": {"w": {"args": ["x"]}}}, "command"),
        ({"mcpServers": {"w": {"type": "carrier-pigeon", "command": "x"}}}, "type"),
        ({"mcpServers": {"w": {"command": "${OXMCP_TEST_UNSET_VARIABLE}"}}}, "command"),
        ({"mcpServers": {"w": {"url": "ftp://example.com/mcp"}}}, "url"),
    ],
)
async def test_bad_configs_name_the_server_and_field(cfg: dict[str, Any], field: str) -> None:
    with pytest.raises(oxmcp.ConfigError) as info:
        await oxmcp.Host.from_config(cfg)
    assert info.value.server == "w"
    assert info.value.field is not None and field in info.value.field


async def test_a_bad_config_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{not json")
    with pytest.raises(oxmcp.ConfigError, match="not valid JSON") as info:
        await oxmcp.Host.from_config(str(path))
    assert info.value.file == str(path)
    with pytest.raises(oxmcp.ConfigError, match="cannot read"):
        await oxmcp.Host.from_config(tmp_path / "missing.json")
    with pytest.raises(oxmcp.McpError):
        await oxmcp.Host.from_config(["not", "a", "config"])  # type: ignore[arg-type]


# --- the agent loop ----------------------------------------------------------------------------


def _last_tool_text_openai(messages: list[dict[str, Any]]) -> str:
    return next(m["content"] for m in reversed(messages) if m.get("role") == "tool")


def _openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One tool call in a scripted OpenAI assistant turn."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def test_the_agent_loop_answers_the_seed_question_with_a_scripted_openai_model() -> None:
    seen_tools: list[Any] = []

    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        seen_tools.append(tools)
        if messages[-1]["role"] == "user":
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    _openai_call("call_1", "weather__get_weather", '{"city": "Beijing"}'),
                    _openai_call("call_2", "everything__add", '{"a": 2, "b": 3}'),
                ],
            }
        return {"role": "assistant", "content": f"北京: {_last_tool_text_openai(messages[:-1])}"}

    async with oxmcp.Host.from_config(config()) as host:
        transcript = await host.run_agent(
            model, [{"role": "user", "content": "北京今天天气怎么样?"}], provider="openai"
        )
    assert transcript["stop"] == "final" and transcript["steps"] == 2
    assert "Beijing" in transcript["final_text"]
    calls = {c["name"]: c for c in transcript["calls"]}
    assert calls["weather__get_weather"]["arguments"] == {"city": "Beijing"}
    assert calls["everything__add"]["text"] == "5"
    names = {t["function"]["name"] for t in seen_tools[0]}
    assert {"weather__get_weather", "everything__add"} <= names
    roles = [m["role"] for m in transcript["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]


async def test_the_agent_loop_speaks_anthropic_and_takes_a_plain_def_model() -> None:
    def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        assert all("input_schema" in t for t in tools)
        if len(messages) == 1:
            return {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "u1",
                        "name": "weather__get_weather",
                        "input": {"city": "Paris"},
                    }
                ],
            }
        return {"role": "assistant", "content": [{"type": "text", "text": "done"}]}

    async with oxmcp.Host.from_config(config()) as host:
        transcript = await host.run_agent(
            model, [{"role": "user", "content": "Paris?"}], provider="anthropic"
        )
    assert transcript["final_text"] == "done"
    result_turn = transcript["messages"][2]
    assert result_turn["content"][0]["type"] == "tool_result"
    assert result_turn["content"][0]["tool_use_id"] == "u1"


async def test_wrong_calls_become_error_results_and_the_step_limit_holds() -> None:
    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        return {
            "role": "assistant",
            "tool_calls": [
                _openai_call("x", "nope", "{"),
                _openai_call("y", "weather__get_weather", "not json"),
            ],
        }

    async with oxmcp.Host.from_config(config()) as host:
        transcript = await host.run_agent(model, [{"role": "user", "content": "go"}], max_steps=3)
    assert transcript["stop"] == "step_limit" and transcript["steps"] == 3
    assert len(transcript["calls"]) == 6 and all(c["is_error"] for c in transcript["calls"])
    assert "no tool named `nope`" in transcript["calls"][0]["text"]


async def test_an_exception_in_the_model_reaches_the_caller_as_itself() -> None:
    class QuotaExceeded(Exception):
        pass

    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        raise QuotaExceeded("429 from the provider")

    def returns_junk(messages: list[dict[str, Any]], tools: Any) -> Any:
        return object()

    async with oxmcp.Host.from_config(config()) as host:
        with pytest.raises(QuotaExceeded, match="429"):
            await host.run_agent(model, [{"role": "user", "content": "go"}])
        with pytest.raises(TypeError, match="not JSON-serialisable"):
            await host.run_agent(returns_junk, [{"role": "user", "content": "go"}])
        with pytest.raises(oxmcp.InvalidArgumentError):
            await host.run_agent(model, [], provider="palm")  # type: ignore[arg-type]
        with pytest.raises(oxmcp.InvalidArgumentError):
            await host.run_agent("not callable", [])  # type: ignore[arg-type]
        # The host still works after all of that.
        result = await host.call_tool("everything", "add", {"a": 1, "b": 1})
        assert result["content"][0]["text"] == "2"


# --- the official npm reference servers (make host-deps) ----------------------------------------

NPM_SERVERS = REPO / "tests" / "host" / "node_modules" / "@modelcontextprotocol"


def _npm(name: str, *args: str) -> dict[str, Any]:
    index = NPM_SERVERS / name / "dist" / "index.js"
    if not index.exists():
        if os.environ.get("OXMCP_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{index} is missing: run `make host-deps`")
        pytest.skip("the npm reference servers are not installed (make host-deps)")
    return {"command": "node", "args": [str(index), *args]}


async def test_npm_reference_servers_and_ours_from_one_config(tmp_path: Path) -> None:
    cfg = config(
        fs=_npm("server-filesystem", str(tmp_path)),
        memory=_npm("server-memory"),
        reference=_npm("server-everything"),
        broken={"command": "node", "args": [str(tmp_path / "no-such-server.js")]},
    )
    cfg["mcpServers"]["memory"]["env"] = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    target = tmp_path / "note.txt"

    async def model(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        # A scripted model (not an LLM): write, read back, then answer with what it read.
        done = [m for m in messages if m.get("role") == "tool"]
        if not done:
            args = json.dumps({"path": str(target), "content": "北京: sunny"})
            return {
                "role": "assistant",
                "tool_calls": [_openai_call("w", "fs__write_file", args)],
            }
        if len(done) == 1:
            args = json.dumps({"path": str(target)})
            return {
                "role": "assistant",
                "tool_calls": [_openai_call("r", "fs__read_text_file", args)],
            }
        return {"role": "assistant", "content": f"read: {done[-1]['content']}"}

    async with oxmcp.Host.from_config(cfg, connect_timeout=60) as host:
        status = {s["name"]: s for s in await host.status()}
        for name in ("weather", "everything", "fs", "memory", "reference"):
            assert status[name]["state"] == "connected", status[name]
        assert status["broken"]["state"] == "failed"
        assert "no-such-server" in status["broken"].get("stderr", "") + status["broken"]["error"]
        tools = await host.tools()
        assert "create_entities" in {t["name"] for t in tools["memory"]}
        assert "get-sum" in {t["name"] for t in tools["reference"]}
        t = await host.translate("openai")
        assert "reference__get-sum" in t.names
        transcript = await host.run_agent(
            model, [{"role": "user", "content": "note the weather"}], provider="openai"
        )
        assert target.read_text() == "北京: sunny"
        assert "北京: sunny" in transcript["final_text"]
        assert [c["tool"] for c in transcript["calls"]] == ["write_file", "read_text_file"]
        made = await host.call_tool(
            "memory",
            "create_entities",
            {"entities": [{"name": "Beijing", "entityType": "city", "observations": ["sunny"]}]},
        )
        assert not made.get("isError"), made
        graph = await host.call_tool("memory", "read_graph", {})
        assert "Beijing" in json.dumps(graph)
