"""oxmcp.translate: the golden vectors the Rust suite reads give identical results here, every
translated tool and tool result is accepted by the providers' own type definitions (the
`openai`, `anthropic` and `google-genai` packages), the way back routes calls and strips
strict-mode nulls, and bad or hostile input gets a typed error or a report, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oxmcp
import pytest
from oxmcp import translate
from pydantic import TypeAdapter

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "schema-translation"
PROVIDERS: list[translate.Provider] = [
    "openai",
    "responses",
    "anthropic",
    "gemini",
    "gemini-openapi",
    "langchain",
]


def _inputs() -> dict[str, list[Any]]:
    out = {}
    for path in sorted((FIXTURES / "input").glob("*.json")):
        out[path.stem] = json.loads(path.read_text())["tools"]
    assert len(out) >= 5, out.keys()
    return out


INPUTS = _inputs()
RESULTS: dict[str, Any] = json.loads((FIXTURES / "results" / "input.json").read_text())["results"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stem", sorted(INPUTS))
def test_golden_tool_vectors_match_the_rust_suite(stem: str, provider: translate.Provider) -> None:
    t = translate.translate(provider, {stem: INPUTS[stem]})
    expected = json.loads((FIXTURES / "expected" / f"{stem}.{provider}.json").read_text())
    assert {"tools": t.tools, "reports": t.reports} == expected
    assert t.provider == provider
    # Every report's name resolves back to its server and tool.
    for report in t.reports:
        if "error" not in report:
            assert t.names[report["name"]] == {"server": stem, "tool": report["tool"]}


def _call_of(name: str) -> translate.ToolCall:
    """The model's call of the result vector ``name``'s tool, on a server named ``srv``."""
    return {
        "id": f"call_{name}",
        "name": f"srv__{name}",
        "server": "srv",
        "tool": name,
        "arguments": {},
        "error": None,
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_golden_result_vectors_match_the_rust_suite(provider: translate.Provider) -> None:
    expected = json.loads((FIXTURES / "results" / f"expected.{provider}.json").read_text())
    assert len(RESULTS) == 8
    for name, result in RESULTS.items():
        call = _call_of(name)
        assert translate.tool_results(provider, [(call, result)]) == expected[name], name


def test_provider_shortcuts_are_the_same_translation() -> None:
    tools = {"pydantic": INPUTS["pydantic"]}
    pairs = [
        (translate.to_openai(tools), "openai"),
        (translate.to_responses(tools), "responses"),
        (translate.to_anthropic(tools), "anthropic"),
        (translate.to_gemini(tools), "gemini"),
        (translate.to_gemini(tools, openapi=True), "gemini-openapi"),
        (translate.to_langchain(tools), "langchain"),
    ]
    for t, provider in pairs:
        assert t.tools == translate.translate(provider, tools).tools  # type: ignore[arg-type]
    loose = translate.to_openai(tools, strict=False)
    assert all(r.get("strict") is False for r in loose.reports)
    assert all(tool["function"]["strict"] is False for tool in loose.tools)


def test_a_plain_list_keeps_names_and_fallback_reasons_are_returned() -> None:
    t = translate.to_openai(INPUTS["zod"])
    assert all("__" not in name for name in t.names)
    # Something in these real shapes cannot be strict; it says why instead of vanishing.
    fallbacks = [r for r in t.reports if r.get("strict") is False]
    assert fallbacks and all(r["fallback_reason"] for r in fallbacks)
    notes = [
        n
        for r in translate.to_gemini(INPUTS["pydantic"], openapi=True).reports
        for n in r.get("notes", [])
    ]
    assert notes and all({"path", "keyword", "value"} <= n.keys() for n in notes)


# --- the providers' own types ------------------------------------------------------------------


def _same(adapter: TypeAdapter[Any], value: Any) -> None:
    """Validates and dumps again: a key the type does not know would be dropped (TypedDicts
    ignore extras) and a wrong shape inside an `Iterable` only fails when dumped, so equality
    of the dump with the input is the check."""
    validated = adapter.validate_python(value)
    assert adapter.dump_python(validated, mode="json", exclude_none=True) == value


def _standard_base64(value: Any) -> Any:
    """google-genai dumps bytes as URL-safe base64; the wire (and we) use the standard one."""
    if isinstance(value, dict):
        return {
            k: v.replace("-", "+").replace("_", "/")
            if k == "data" and isinstance(v, str)
            else _standard_base64(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_standard_base64(v) for v in value]
    return value


def _gemini_same(model: Any, value: Any) -> None:
    # google-genai models forbid extra keys and take bytes as base64 in JSON mode.
    validated = model.model_validate_json(json.dumps(value))
    dumped = validated.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert _standard_base64(dumped) == value


@pytest.mark.parametrize("stem", sorted(INPUTS))
def test_every_translated_tool_is_a_valid_provider_tool(stem: str) -> None:
    from anthropic.types import ToolParam
    from google.genai import types as gtypes
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

    tools = {stem: INPUTS[stem]}
    chat = TypeAdapter(ChatCompletionFunctionToolParam)
    for tool in translate.to_openai(tools).tools + translate.to_openai(tools, strict=False).tools:
        _same(chat, tool)
    responses = TypeAdapter(FunctionToolParam)
    for tool in translate.to_responses(tools).tools:
        _same(responses, tool)
    anthropic = TypeAdapter(ToolParam)
    for tool in translate.to_anthropic(tools).tools:
        _same(anthropic, tool)
    for openapi in (False, True):
        (wrapper,) = translate.to_gemini(tools, openapi=openapi).tools
        _gemini_same(gtypes.Tool, wrapper)


def test_every_translated_tool_result_is_a_valid_provider_message() -> None:
    from anthropic.types import MessageParam
    from google.genai import types as gtypes
    from openai.types.chat import (
        ChatCompletionToolMessageParam,
        ChatCompletionUserMessageParam,
    )
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    # One exact type per message (a union's serializer cannot be trusted with the lazy
    # `Iterable` fields of these TypedDicts).
    chat: dict[str, TypeAdapter[Any]] = {
        "tool": TypeAdapter(ChatCompletionToolMessageParam),
        "user": TypeAdapter(ChatCompletionUserMessageParam),
    }
    items = TypeAdapter(FunctionCallOutput)
    anthropic = TypeAdapter(MessageParam)
    for name, result in RESULTS.items():
        call = _call_of(name)
        messages = translate.tool_results("openai", [(call, result)])
        assert messages[0]["role"] == "tool"
        for message in messages:
            _same(chat[message["role"]], message)
        for item in translate.tool_results("responses", [(call, result)]):
            assert item["type"] == "function_call_output"
            _same(items, item)
        for message in translate.tool_results("anthropic", [(call, result)]):
            _same(anthropic, message)
        for provider in ("gemini", "gemini-openapi"):
            for content in translate.tool_results(provider, [(call, result)]):  # type: ignore[arg-type]
                _gemini_same(gtypes.Content, content)


def test_a_broken_message_is_rejected_by_the_same_check() -> None:
    """The checks above can fail: a key the provider does not know, or a wrong block."""
    from anthropic.types import ToolParam
    from google.genai import types as gtypes

    (tool,) = translate.to_anthropic(INPUTS["server-memory"][:1]).tools
    with pytest.raises(AssertionError):
        _same(TypeAdapter(ToolParam), {**tool, "parameters": {}})
    (wrapper,) = translate.to_gemini(INPUTS["server-memory"][:1]).tools
    with pytest.raises(ValueError):
        _gemini_same(gtypes.Tool, {**wrapper, "input_schema": {}})


# --- the way back ------------------------------------------------------------------------------

BOOK = [
    {
        "name": "book",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "nights": {"type": "integer", "default": 1},
            },
            "required": ["city"],
        },
    }
]


def test_calls_are_read_from_every_provider_shape_and_routed() -> None:
    args = {"city": "Beijing", "nights": 2}
    turns: dict[translate.Provider, Any] = {
        "openai": {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "trips__book", "arguments": json.dumps(args)},
                            }
                        ],
                    }
                }
            ]
        },
        "responses": {
            "output": [
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "trips__book",
                    "arguments": json.dumps(args),
                }
            ]
        },
        "anthropic": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "trips__book", "input": args}],
        },
        "gemini": {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"functionCall": {"id": "c1", "name": "trips__book", "args": args}}
                        ],
                    }
                }
            ]
        },
        "langchain": {
            "type": "ai",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "trips__book", "args": args}],
        },
    }
    for provider, turn in turns.items():
        t = translate.translate(provider, {"trips": BOOK})
        assert t.calls(turn) == [
            {
                "id": "c1",
                "name": "trips__book",
                "server": "trips",
                "tool": "book",
                "arguments": args,
                "error": None,
            }
        ], provider


def test_strict_nulls_are_stripped_so_server_defaults_apply() -> None:
    t = translate.to_openai({"trips": BOOK})
    (tool,) = t.tools
    assert tool["function"]["strict"] is True
    assert set(tool["function"]["parameters"]["required"]) == {"city", "nights"}
    turn = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {
                    "name": "trips__book",
                    "arguments": '{"city": "Oslo", "nights": null}',
                },
            }
        ],
    }
    (call,) = t.calls(turn)
    assert call["arguments"] == {"city": "Oslo"}


def test_results_go_back_through_the_translation() -> None:
    t = translate.to_anthropic({"trips": BOOK})
    (call,) = t.calls(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "u1", "name": "trips__book", "input": {"city": "Oslo"}}
            ],
        }
    )
    result: oxmcp.types.CallToolResult = {"content": [{"type": "text", "text": "booked"}]}
    (message,) = t.results([(call, result)])
    assert message["role"] == "user"
    assert message["content"][0]["tool_use_id"] == "u1"
    assert message["content"][0]["content"][0]["text"] == "booked"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"city": ', "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('"Oslo"', "expected a JSON object"),
    ],
)
def test_bad_arguments_become_text_for_the_model(raw: str, why: str) -> None:
    t = translate.to_openai({"trips": BOOK})
    turn = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "trips__book", "arguments": raw}}
        ],
    }
    (call,) = t.calls(turn)
    assert call["arguments"] is None and call["server"] is None
    assert call["error"] is not None and why in call["error"]


def test_an_unknown_tool_name_becomes_text_for_the_model() -> None:
    t = translate.to_openai({"trips": BOOK})
    turn = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}
        ],
    }
    (call,) = t.calls(turn)
    assert call["error"] is not None
    assert "no tool named `rm_rf`" in call["error"] and "trips__book" in call["error"]
    assert t.calls({"role": "assistant", "content": "no tools today"}) == []


# --- bad and hostile input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "tools", ["tools", 3, [{"inputSchema": {}}], {"a": 3}, [{"name": "x", "inputSchema": 5}]]
)
def test_input_that_is_not_a_tool_list_is_a_typed_error(tools: Any) -> None:
    with pytest.raises(oxmcp.InvalidArgumentError):
        translate.to_openai(tools)


def test_unknown_provider_and_namespace_are_typed_errors() -> None:
    with pytest.raises(oxmcp.InvalidArgumentError, match="unknown provider"):
        translate.translate("palm", BOOK)  # type: ignore[arg-type]
    with pytest.raises(
        oxmcp.InvalidArgumentError,
        match=r"unknown namespace `sometimes` \(one of: always, collision, never\)",
    ):
        translate.to_openai(BOOK, namespace="sometimes")  # type: ignore[arg-type]
    assert len(translate.to_openai(BOOK, namespace="collision").tools) == 1
    with pytest.raises(oxmcp.InvalidArgumentError):
        translate.tool_results("openai", [({"name": "x"}, {"content": 7})])  # type: ignore[typeddict-item]
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        translate.to_openai([{"name": "x", "inputSchema": {"type": "object", "x": object()}}])


def _refused(schema: Any) -> str:
    t = translate.to_openai(
        {
            "s": [
                {"name": "bad", "inputSchema": schema},
                {"name": "good", "inputSchema": {"type": "object"}},
            ]
        }
    )
    bad, good = sorted(t.reports, key=lambda r: r["tool"])
    assert "error" not in good and len(t.tools) == 1
    assert "s__bad" not in t.names or "error" in bad
    return bad["error"]


def test_hostile_schemas_are_reported_not_raised() -> None:
    assert "loops back" in _refused({"$ref": "#"})
    assert _refused({"type": "object", "properties": {"a": {"$ref": "https://example.com/x"}}})
    big = "x" * (11 * 1024 * 1024)
    assert _refused({"type": "object", "properties": {"a": {"type": "string", "description": big}}})


def test_a_very_deep_schema_is_refused_without_a_crash() -> None:
    # Deeper than the core's schema cap (64 levels), within the binding's nesting cap (128),
    # so the core refuses this one tool and reports why.
    node: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        node = {"type": "object", "properties": {"a": node}}
    assert "deep" in _refused(node)


def test_a_10_000_deep_value_is_a_typed_error_not_a_stack_overflow() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(10_000):
        node = {"type": "object", "properties": {"a": node}}
    with pytest.raises(oxmcp.InvalidSchemaError, match="deeper than 128"):
        translate.to_openai([{"name": "x", "inputSchema": node}])
    t = translate.to_openai(BOOK)
    with pytest.raises(oxmcp.InvalidSchemaError):
        t.calls({"role": "assistant", "content": [node]})
    with pytest.raises(oxmcp.InvalidSchemaError):
        translate.tool_results("openai", [({"name": "book"}, {"content": [node]})])  # type: ignore[typeddict-item,list-item]
