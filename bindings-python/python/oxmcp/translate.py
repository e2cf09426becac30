"""MCP tools in every major LLM API's function-calling format, and the way back.

>>> from oxmcp import translate
>>> t = translate.to_openai(tools)                     # a tools/list array
>>> t = translate.to_anthropic({"weather": tools})     # or server -> tools (names namespaced)
>>> response = client.chat.completions.create(model=..., messages=..., tools=t.tools)
>>> for call in t.calls(response):                     # the model's tool calls, routed
...     result = await session.call_tool(call["tool"], call["arguments"])
>>> messages += t.results([(call, result)])            # back as the provider's tool results

The translation itself is the core's (oxmcp.schema): strict mode, names, keywords moved into
descriptions, refused hostile schemas. Nothing is dropped silently: every tool has a report
with its notes, its strict-mode fallback reason or the reason it was left out.

For a model without function calling, :func:`to_prompt` gives the tools as system-prompt
text and reads the calls back out of the reply text:

>>> t = translate.to_prompt(tools, format="hermes")
>>> messages = [{"role": "system", "content": t.system}, {"role": "user", "content": q}]
>>> reply = ...                                        # the model's text
>>> for call in t.calls(reply):                        # routed calls, or {"error": ...}
...     if "error" not in call:
...         result = await session.call_tool(call["tool"], call["arguments"])
>>> messages += t.results([(call, result)])            # <tool_response> text in a user turn
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, cast, final

from typing_extensions import NotRequired

from . import _native
from .types import CallToolResult, Tool

__all__ = [
    "Provider",
    "Namespace",
    "Note",
    "ToolReport",
    "ToolTarget",
    "CallRef",
    "ToolCall",
    "Translation",
    "translate",
    "to_openai",
    "to_responses",
    "to_anthropic",
    "to_gemini",
    "to_langchain",
    "to_prompt",
    "PromptFormat",
    "PromptCall",
    "PromptError",
    "PromptReply",
    "PromptTranslation",
    "tool_results",
]

Provider = Literal[
    "openai",
    "responses",
    "anthropic",
    "gemini",
    "gemini-openapi",
    "langchain",
    "prompt",
    "prompt:hermes",
    "prompt:json",
    "prompt:react",
    "prompt:xml",
]
"""The providers: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini with
``parametersJsonSchema``, Gemini with the legacy OpenAPI-subset ``parameters``, LangChain, and
``prompt`` (a model without function calling, ``prompt`` alone being ``prompt:hermes``)."""

PromptFormat = Literal["hermes", "json", "react", "xml"]
"""How a model without function calling writes its calls: ``hermes``
(``<tool_call>{...}</tool_call>``, the default), ``json`` (Llama 3.1 ``{"name", "parameters"}``),
``react`` (``Action:`` / ``Action Input:``), ``xml`` (``<tool_use>``)."""

Namespace = Literal["always", "collision", "never"]
"""Which names get the ``server__`` prefix when tools of several servers are translated."""

Tools = Sequence[Tool] | Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]]


class Note(TypedDict):
    """A keyword the provider does not take, moved into the description the model reads."""

    path: str
    keyword: str
    value: Any


class ToolReport(TypedDict):
    """What happened to one tool."""

    name: str
    server: str
    tool: str
    strict: NotRequired[bool]
    fallback_reason: NotRequired[str]
    notes: NotRequired[list[Note]]
    error: NotRequired[str]


class ToolTarget(TypedDict):
    server: str
    tool: str


class CallRef(TypedDict):
    """What a tool result needs of its call: the provider's call id and the tool's name (a
    :class:`ToolCall` is one)."""

    id: str | None
    name: str


class ToolCall(TypedDict):
    """A tool call read from an assistant turn and routed back to its server and tool.

    ``arguments`` are ready for ``tools/call`` (strict-mode nulls stripped so server defaults
    apply). When the call cannot be made (an unknown name, arguments that are not a JSON
    object) ``error`` holds the text to send back to the model and the rest is ``None``.
    """

    id: str | None
    name: str
    server: str | None
    tool: str | None
    arguments: dict[str, Any] | None
    error: str | None


@final
class PromptCall(TypedDict):
    """A call read out of a reply, routed: ``server`` only when names are namespaced. ``id``
    is ``call_<n>`` (the text formats carry none)."""

    id: str
    name: str
    server: NotRequired[str]
    tool: str
    arguments: dict[str, Any]


@final
class PromptError(TypedDict):
    """A call the model got wrong: ``error`` is the text to send back as its result (fixed
    wording, naming the tool and the problem)."""

    index: int
    error: str
    kind: Literal["invalid_json", "malformed", "unknown_tool", "invalid_arguments"]
    tool: str | None


class PromptReply(TypedDict):
    """A whole reply: the text outside calls, the ``<think>`` text, ReAct's final answer, and
    every call attempted, in order."""

    content: str
    reasoning: str
    answer: str | None
    calls: list[PromptCall | PromptError]


class Translation:
    """Tools in one provider's format plus what is needed to go back."""

    __slots__ = ("_native", "names", "provider", "reports", "tools")

    def __init__(self, native: _native.NativeTranslation) -> None:
        value = native.value()
        self._native = native
        self.provider: Provider = cast(Provider, native.provider)
        self.tools: list[dict[str, Any]] = value["tools"]
        """The value for the API request's ``tools`` field (Gemini: one
        ``functionDeclarations`` tool)."""
        self.names: dict[str, ToolTarget] = value["names"]
        """Provider-facing name -> server and MCP tool name."""
        self.reports: list[ToolReport] = value["reports"]
        """One per tool, refused ones included."""

    def calls(self, turn: Any) -> list[ToolCall]:
        """The tool calls in an assistant turn: a message, or the whole API response (as a
        dict; pass ``response.model_dump()`` for an SDK object)."""
        return cast("list[ToolCall]", self._native.calls(_plain(turn)))

    def results(self, outcomes: Iterable[tuple[CallRef, CallToolResult]]) -> list[dict[str, Any]]:
        """The messages (or items) that carry these results back to the model, in order."""
        return tool_results(self.provider, outcomes)

    def __repr__(self) -> str:
        return f"<Translation {self.provider}: {len(self.reports)} tools>"


def _plain(value: Any) -> Any:
    """Accepts a pydantic object from a provider SDK as well as a dict."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        return dump(mode="json", exclude_none=True)
    return value


def translate(
    provider: Provider, tools: Tools, *, strict: bool = True, namespace: Namespace = "always"
) -> Translation:
    """Translates ``tools`` (a ``tools/list`` array, names kept and only sanitised; or a dict
    of server name -> array, names namespaced as ``namespace`` says) for ``provider``.

    Raises :class:`oxmcp.InvalidArgumentError` only when ``tools`` is not a tool list; a tool
    whose schema is refused (hostile, invalid) is left out and reported.
    """
    return Translation(_native.translate(provider, tools, strict, namespace))


def to_openai(tools: Tools, *, strict: bool = True, namespace: Namespace = "always") -> Translation:
    """OpenAI Chat Completions ``tools`` (``{"type": "function", "function": {...}}``). In
    strict mode every object is closed and optional properties become nullable; a schema that
    cannot be made strict falls back to non-strict for that tool, with the reason reported."""
    return translate("openai", tools, strict=strict, namespace=namespace)


def to_responses(
    tools: Tools, *, strict: bool = True, namespace: Namespace = "always"
) -> Translation:
    """OpenAI Responses API ``tools`` (flat ``function`` tools; ``strict`` always set)."""
    return translate("responses", tools, strict=strict, namespace=namespace)


def to_anthropic(tools: Tools, *, namespace: Namespace = "always") -> Translation:
    """Anthropic Messages ``tools`` (``name``, ``description``, ``input_schema``)."""
    return translate("anthropic", tools, namespace=namespace)


def to_gemini(
    tools: Tools, *, openapi: bool = False, namespace: Namespace = "always"
) -> Translation:
    """Gemini ``tools``: one ``functionDeclarations`` tool with ``parametersJsonSchema`` (the
    JSON Schema as is), or with ``openapi=True`` the legacy OpenAPI-subset ``parameters``
    (refs inlined, unions and other keywords it cannot take moved into descriptions)."""
    return translate("gemini-openapi" if openapi else "gemini", tools, namespace=namespace)


def to_langchain(tools: Tools, *, namespace: Namespace = "always") -> Translation:
    """LangChain's tool shape (``name``, ``description``, ``args_schema``)."""
    return translate("langchain", tools, namespace=namespace)


class PromptTranslation(Translation):
    """Tools as system-prompt text for a model without function calling, and the way back."""

    __slots__ = ("format", "stop", "system")

    def __init__(self, native: _native.NativeTranslation) -> None:
        super().__init__(native)
        self.format: PromptFormat = cast(PromptFormat, native.provider.split(":", 1)[1])
        self.system: str = native.system() or ""
        """The text to put in (or append to) the system message."""
        self.stop: list[str] = native.stop()
        """Stop sequences to send with the request (``react``: ``"\\nObservation:"``)."""
        # No `tools` field: the tools are in the text.
        self.tools = []

    def calls(self, turn: Any) -> list[PromptCall | PromptError]:  # type: ignore[override]
        """The calls in a reply (its text, a message, or a whole Chat Completions response):
        each routed, or for a malformed one a dict with an ``error`` key whose text goes back
        to the model as that call's result."""
        return cast("list[PromptCall | PromptError]", self._native.calls(_plain(turn)))

    def reply(self, turn: Any) -> PromptReply:
        """The whole reading of a reply: content, reasoning, final answer and calls."""
        return cast(PromptReply, self._native.reply(_plain(turn)))

    def results(  # type: ignore[override]
        self, outcomes: Iterable[tuple[PromptCall | PromptError | CallRef, CallToolResult | str]]
    ) -> list[dict[str, Any]]:
        """The ``user`` message carrying these results back as text in the format
        (``<tool_response>``, ``Observation:``, ...). A malformed call may be paired with its
        own ``error`` text (a string) or with a result."""
        items = []
        for call, result in outcomes:
            if isinstance(result, str):
                result = {"content": [{"type": "text", "text": result}], "isError": True}
            fields = cast("Mapping[str, Any]", call)
            name = fields.get("name") or fields.get("tool") or ""
            items.append({"id": fields.get("id"), "name": name, "result": _plain(result)})
        return cast("list[dict[str, Any]]", _native.result_messages_for(self.provider, items))

    def history(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """An OpenAI-shaped conversation rewritten into the format: ``tool_calls`` as call
        text, ``tool`` messages as one ``user`` message of results."""
        # Anything but a list goes through as is: the native side names the mistake.
        items: Any = messages
        if isinstance(messages, list | tuple):
            items = [dict(m) if isinstance(m, Mapping) else m for m in messages]
        return cast("list[dict[str, Any]]", _native.prompt_history(self.format, items))

    def __repr__(self) -> str:
        return f"<PromptTranslation {self.format}: {len(self.reports)} tools>"


def to_prompt(
    tools: Tools, format: PromptFormat = "hermes", *, namespace: Namespace = "always"
) -> PromptTranslation:
    """Tools for a model without function calling: ``.system`` is the system-prompt text,
    ``.calls(text)`` reads the calls out of a reply (never guessing: bad JSON, an unknown tool
    or arguments failing the schema give a dict with an ``error`` message for the model),
    ``.results(...)`` writes results back as text in the same format."""
    return PromptTranslation(_native.translate(f"prompt:{format}", tools, True, namespace))


def tool_results(
    provider: Provider, outcomes: Iterable[tuple[CallRef, CallToolResult]]
) -> list[dict[str, Any]]:
    """``CallToolResult``s as ``provider``'s tool-result messages (text, images, audio,
    resource links, embedded resources, ``structuredContent``, ``isError``), degrading what
    the provider cannot take to text. Each outcome pairs the call (its ``id`` and ``name``)
    with its result."""
    items = [
        {"id": call.get("id"), "name": call["name"], "result": _plain(result)}
        for call, result in outcomes
    ]
    return cast("list[dict[str, Any]]", _native.result_messages_for(provider, items))
