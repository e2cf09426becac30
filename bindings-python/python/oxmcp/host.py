"""The host: every server of an ``mcpServers`` config behind one set of namespaced tools.

>>> async with Host.from_config("mcp.json") as host:
...     print(await host.status())                     # failed servers named, with stderr
...     tools = (await host.translate("openai")).tools  # ready for the API request
...     transcript = await host.run_agent(model, messages, provider="openai")

Servers start concurrently, each under its own timeout, and one that does not exist, crashes
or never answers leaves the others working. Each server keeps one session; its tools are
cached until it says they changed; a crashed stdio server starts again on the next call. All
of that is the core's (``oxmcp::host``); this module only gives it a Python shape.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from typing_extensions import NotRequired

from . import _native
from ._opening import Opening
from .translate import Namespace, PromptTranslation, Provider, Translation, _plain
from .types import CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool

__all__ = [
    "Approve",
    "ApprovalRequest",
    "CallRecord",
    "Host",
    "Model",
    "ServerStatus",
    "EntryIssue",
    "Transcript",
]

Model = Callable[[list[dict[str, Any]], Any], Any]
"""``model(messages, tools) -> assistant turn`` (``def`` or ``async def``): the conversation
and the request's ``tools`` value in the provider's format in, the assistant message (or the
whole API response, a dict or a provider SDK's pydantic object) out."""


class ApprovalRequest(TypedDict):
    """One tool call the model made, waiting for ``approve``."""

    server: str
    tool: str
    arguments: dict[str, Any]
    annotations: dict[str, Any] | None
    """The tool's annotations as the server listed them (``readOnlyHint``,
    ``destructiveHint``, ...), or None."""


Approve = Callable[[ApprovalRequest], Any]
"""``approve(request)`` (``def`` or ``async def``) returns ``True`` to run the call, ``False``
or a reason (a ``str``) to refuse it, or a dict of edited arguments to run it with those."""


class EntryIssue(TypedDict):
    """A list entry that did not parse as it came: left out (``skipped``; the rest of the list
    works) or repaired and kept (``repaired``: a tool schema spelled ``input_schema``)."""

    list: Literal["tools", "resources", "resourceTemplates", "prompts"]
    name: NotRequired[str]
    field: str
    reason: str


class ServerStatus(TypedDict):
    name: str
    state: Literal["connected", "failed", "disabled"]
    protocol_version: NotRequired[str]
    server_info: NotRequired[str]
    error: NotRequired[str]
    error_kind: NotRequired[str]
    stderr: NotRequired[str]
    restarts: int
    skipped: NotRequired[list[EntryIssue]]
    repaired: NotRequired[list[EntryIssue]]


class CallRecord(TypedDict):
    step: int
    name: str
    server: str | None
    tool: str | None
    arguments: Any
    is_error: bool
    text: str


class Transcript(TypedDict):
    messages: list[dict[str, Any]]
    final_text: str
    steps: int
    stop: Literal["final", "step_limit", "format_errors"]
    calls: list[CallRecord]
    reason: NotRequired[str]
    """Why the run stopped when it did not end with an answer (the step limit; with
    ``provider="prompt"``, three replies in a row with a malformed call)."""


def _model_adapter(model: Model) -> Callable[..., Any]:
    """Lets the model return a provider SDK's pydantic object as well as a dict, keeping
    ``def`` versus ``async def`` (the core runs each its own way)."""
    call = type(model).__call__ if not inspect.isfunction(model) else None
    if inspect.iscoroutinefunction(model) or inspect.iscoroutinefunction(call):

        async def run_async(messages: list[dict[str, Any]], tools: Any) -> Any:
            return _plain(await model(messages, tools))

        return run_async

    def run(messages: list[dict[str, Any]], tools: Any) -> Any:
        out = model(messages, tools)
        if inspect.isawaitable(out):
            raise TypeError(
                "the model returned an awaitable from a plain function; make it `async def`"
            )
        return _plain(out)

    return run


class Host:
    """Many MCP servers from one config."""

    def __init__(self, native: _native.NativeHost) -> None:
        self._native = native

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any],
        *,
        connect_timeout: float | None = None,
        restart: bool = True,
        client_name: str | None = None,
    ) -> Opening[Host]:
        """Starts the servers of ``config``: a file in the Claude Desktop, Cursor, Claude Code
        (``.mcp.json``) or VS Code shape, or the parsed dict. ``${VAR}`` and ``${env:VAR}``
        are expanded from the environment. Only a bad config raises
        (:class:`oxmcp.ConfigError` naming the file, server and field); a server that cannot
        start is reported by :meth:`status`."""
        source: Any = os.fspath(config) if isinstance(config, os.PathLike) else config

        async def open_() -> Host:
            native = await _native.NativeHost.start(source, connect_timeout, restart, client_name)
            return cls(native)

        return Opening(open_)

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def server_names(self) -> list[str]:
        """The enabled servers, in config order."""
        return self._native.server_names()

    async def status(self) -> list[ServerStatus]:
        """Each server's state; a failed one carries the error and its stderr tail."""
        return cast("list[ServerStatus]", await self._native.status())

    async def tools(self) -> dict[str, list[Tool]]:
        """Each connected server's tools (cached until the server sends ``list_changed``)."""
        return cast("dict[str, list[Tool]]", await self._native.tools())

    async def resources(self) -> dict[str, list[Resource]]:
        return cast("dict[str, list[Resource]]", await self._native.resources())

    async def prompts(self) -> dict[str, list[Prompt]]:
        return cast("dict[str, list[Prompt]]", await self._native.prompts())

    async def translate(
        self, provider: Provider = "openai", *, strict: bool = True, namespace: Namespace = "always"
    ) -> Translation:
        """Every connected server's tools in ``provider``'s format (see
        :mod:`oxmcp.translate`); ``translation.calls(turn)`` routes the model's calls back.
        For ``prompt`` it is a :class:`~oxmcp.translate.PromptTranslation`."""
        native = await self._native.translate(provider, strict, namespace)
        if provider.startswith("prompt"):
            return PromptTranslation(native)
        return Translation(native)

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        task: bool = False,
    ) -> CallToolResult:
        """``tools/call`` on ``server`` over its one session (a crashed stdio server is started
        again first). A tool's own failure is an ``isError`` result, not an exception. With
        ``task=True`` the call runs as a task (where the server offers tasks) and this waits
        for its result: a long tool neither times out nor holds a request open."""
        return cast(
            CallToolResult,
            await self._native.call_tool(server, tool, dict(arguments or {}), timeout, task),
        )

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        return cast(ReadResourceResult, await self._native.read_resource(server, uri))

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        return cast(
            GetPromptResult,
            await self._native.get_prompt(server, name, dict(arguments or {})),
        )

    async def run_agent(
        self,
        model: Model,
        messages: Sequence[Mapping[str, Any]],
        *,
        provider: Provider = "openai",
        strict: bool = True,
        namespace: Namespace = "always",
        max_steps: int = 16,
        approve: Approve | None = None,
    ) -> Transcript:
        """The agent loop: ask ``model``, run the tool calls of its turn concurrently, feed the
        results back, until a turn without tool calls or ``max_steps`` turns. A tool call the
        model got wrong, or one that failed, becomes an error result the model sees; only an
        exception from ``model`` itself ends the run (raised as it was).

        With ``approve``, each tool call is shown to it first (an :class:`ApprovalRequest`)
        unless the server marks the tool ``readOnlyHint: true`` or the config lists it in
        ``alwaysAllow`` / ``autoApprove``. A refused call never reaches the server; the model
        gets an error result saying the user declined it (with the reason, if one was given).
        """
        return cast(
            Transcript,
            await self._native.run_agent(
                # A non-callable goes through as is: the native side names the mistake.
                _model_adapter(model) if callable(model) else model,
                [dict(m) for m in messages],
                provider,
                strict,
                namespace,
                max_steps,
                approve,
            ),
        )

    async def close(self) -> None:
        """Closes every session; stdio servers go through the shutdown ladder."""
        await self._native.close()

    def __repr__(self) -> str:
        return f"<Host {', '.join(self.server_names)}>"
