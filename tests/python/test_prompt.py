"""oxmcp.translate.to_prompt (models without function calling): the golden vectors the Rust
suite reads (tests/fixtures/prompt-tools/) give the same calls, errors, system text and result
messages here; bad input is an error value or a typed exception, never a crash; and the agent
loop with provider="prompt" drives real servers from a scripted text-only model, stopping a
model that keeps getting the format wrong."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import oxmcp
import pytest
from oxmcp import translate

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "prompt-tools"
GOOD = json.loads((FIXTURES / "good.json").read_text())
BAD = json.loads((FIXTURES / "bad.json").read_text())
TOOLS = GOOD["tools"]
WEATHER_SRC = HERE.parent.parent / "examples" / "python" / "weather-server" / "src"
WEATHER = [
    "-c",
    f"import sys; sys.path.insert(0, {str(WEATHER_SRC)!r}); import oxmcp_weather; "
    "oxmcp_weather.main()",
]


def _subset(expected: Any, actual: Any, at: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), at
        for key, value in expected.items():
            _subset(value, actual.get(key), f"{at}.{key}")
    else:
        assert expected == actual, at


@pytest.mark.parametrize("case", GOOD["cases"], ids=lambda c: c["id"])
def test_good_vectors_match_the_rust_suite(case: dict[str, Any]) -> None:
    t = translate.to_prompt(TOOLS, format=case["format"])
    calls = t.calls(case["text"])
    assert len(calls) == len(case["calls"]), calls
    for i, (expected, actual) in enumerate(zip(case["calls"], calls, strict=True)):
        _subset(expected, actual, f"call {i}")
        assert "error" not in actual and actual["id"] == f"call_{i + 1}"
        assert "server" not in actual  # a bare tool list is not namespaced
    reply = t.reply(case["text"])
    assert reply["content"] == case["content"]
    if "reasoning" in case:
        assert reply["reasoning"] == case["reasoning"]
    if "answer" in case:
        assert reply["answer"] == case["answer"]


@pytest.mark.parametrize("case", BAD["cases"], ids=lambda c: c["id"])
def test_bad_vectors_give_the_same_errors_as_the_rust_suite(case: dict[str, Any]) -> None:
    t = translate.to_prompt(TOOLS, format=case["format"])
    calls = t.calls(case["text"])
    assert calls == case["calls"]
    assert any("error" in c for c in calls)


@pytest.mark.parametrize("fmt", ["hermes", "json", "react", "xml"])
def test_the_system_text_is_the_golden_one(fmt: translate.PromptFormat) -> None:
    t = translate.to_prompt(TOOLS, format=fmt)
    assert t.system == (FIXTURES / "render" / f"{fmt}.txt").read_text()
    assert t.format == fmt and t.provider == f"prompt:{fmt}"
    assert t.tools == []
    assert t.stop == (["\nObservation:"] if fmt == "react" else [])
    assert [r["name"] for r in t.reports] == ["read_file", "get_weather", "list_dir"]


def test_result_vectors_match_the_rust_suite() -> None:
    vectors = json.loads((FIXTURES / "results.json").read_text())
    for case in vectors["cases"]:
        t = translate.to_prompt(TOOLS, format=case["format"])
        outcomes = [({"id": None, "name": o["name"]}, o["result"]) for o in case["outcomes"]]
        assert t.results(outcomes) == case["messages"], case["id"]


def test_a_malformed_call_goes_back_with_its_own_error_text() -> None:
    t = translate.to_prompt(TOOLS)
    good, bad = t.calls(
        '<tool_call>{"name":"list_dir","arguments":{}}</tool_call>'
        '<tool_call>{"name":"nope","arguments":{}}</tool_call>'
    )
    assert "error" in bad and bad["kind"] == "unknown_tool"
    hello: Any = {"content": [{"type": "text", "text": "a.txt"}]}
    [message] = t.results([(good, hello), (bad, bad["error"])])  # type: ignore[list-item]
    assert message["role"] == "user"
    assert '"content": "a.txt"' in message["content"]
    assert "Error: nope is not a valid tool" in message["content"]


def test_namespaced_tools_name_their_server() -> None:
    t = translate.to_prompt({"files": TOOLS}, format="xml")
    [call] = t.calls("<tool_use><name>files__read_file</name><arguments>{}</arguments></tool_use>")
    assert call.get("kind") == "invalid_arguments", call
    [call] = t.calls(
        '<tool_use><name>files__read_file</name><arguments>{"path": "x"}</arguments></tool_use>'
    )
    assert call == {
        "id": "call_1",
        "name": "files__read_file",
        "server": "files",
        "tool": "read_file",
        "arguments": {"path": "x"},
    }


def test_history_is_rewritten_into_the_format() -> None:
    t = translate.to_prompt(TOOLS, format="react")
    out = t.history(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "function": {"name": "list_dir", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ]
    )
    assert out == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Action: list_dir\nAction Input: {}"},
        {"role": "user", "content": "Observation: a.txt"},
    ]


def test_a_mebibyte_of_pathological_reply_returns_in_under_a_second() -> None:
    t = translate.to_prompt(TOOLS)
    for text in ["<tool_call>" * (2**20 // 11), "{" * 2**20]:
        started = time.perf_counter()
        calls = t.calls(text)
        assert time.perf_counter() - started < 1.0
        assert len(calls) <= 1


def test_bad_input_is_a_typed_error_or_nothing_found() -> None:
    with pytest.raises(oxmcp.InvalidArgumentError, match="pythonic"):
        translate.to_prompt(TOOLS, format="pythonic")  # type: ignore[arg-type]
    with pytest.raises(oxmcp.InvalidArgumentError):
        translate.to_prompt("not tools")  # type: ignore[arg-type]
    t = translate.to_prompt(TOOLS)
    assert t.calls(42) == []
    assert t.calls({"choices": [{"message": {"content": "no calls here"}}]}) == []
    with pytest.raises(oxmcp.InvalidArgumentError):
        t.history("not a list")  # type: ignore[arg-type]
    with pytest.raises(oxmcp.InvalidArgumentError):
        translate.to_openai(TOOLS)._native.reply("x")


async def test_run_agent_with_a_scripted_model_without_function_calling() -> None:
    seen: list[Any] = []

    def model(messages: list[dict[str, Any]], tools: Any) -> str:
        # SCRIPTED MODEL (not an LLM) without function calling: it only sees text.
        seen.append((messages, tools))
        if len(seen) == 1:
            return (
                "Checking.\n<tool_call>\n"
                '{"name": "weather__get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
            )
        return "北京: " + messages[-1]["content"]

    cfg = {"mcpServers": {"weather": {"command": sys.executable, "args": WEATHER}}}
    async with oxmcp.Host.from_config(cfg) as host:
        transcript = await host.run_agent(
            model, [{"role": "user", "content": "北京今天天气怎么样?"}], provider="prompt"
        )
        translation = await host.translate("prompt:hermes")
        assert isinstance(translation, translate.PromptTranslation)
    assert transcript["stop"] == "final" and transcript["steps"] == 2
    [call] = transcript["calls"]
    assert call["server"] == "weather" and call["arguments"] == {"city": "Beijing"}
    assert not call["is_error"]
    first_messages, tools = seen[0]
    assert isinstance(tools, str) and "weather__get_weather" in tools
    assert first_messages[0] == {"role": "system", "content": tools}
    assert "<tool_response>" in transcript["messages"][-2]["content"]
    assert transcript["final_text"].startswith("北京: <tool_response>")


async def test_run_agent_stops_after_three_malformed_replies_in_a_row() -> None:
    def model(messages: list[dict[str, Any]], tools: Any) -> str:
        return '<tool_call>{"name": "weather__get_weather", "arguments": {"city": </tool_call>'

    cfg = {"mcpServers": {"weather": {"command": sys.executable, "args": WEATHER}}}
    async with oxmcp.Host.from_config(cfg) as host:
        transcript = await host.run_agent(
            model, [{"role": "user", "content": "go"}], provider="prompt:hermes", max_steps=10
        )
    assert transcript["stop"] == "format_errors" and transcript["steps"] == 3
    assert "3 replies in a row" in transcript.get("reason", "")
    assert all(c["is_error"] and c["server"] is None for c in transcript["calls"])
