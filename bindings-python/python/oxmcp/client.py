"""The client API: ``async with Client.stdio(...)`` / ``.http(...)`` / ``.websocket(...)``, with
every request of the protocol under the official SDK's names. Results are plain dicts with
the wire's keys (typed in :mod:`oxmcp.types`).

Cancelling the task awaiting a request sends ``notifications/cancelled``; ``timeout=`` (seconds)
bounds one call (reset by progress) and raises :class:`oxmcp.RequestTimeoutError`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from . import _native
from ._opening import Opening
from .auth import OAuth
from .types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
    ServerDetails,
)

if TYPE_CHECKING:
    from .tasks import TaskHandle

__all__ = ["Client"]

Callback = Callable[..., Any]


def _maybe_await(loop_tasks: set[asyncio.Task[Any]], fn: Callback, *args: Any) -> None:
    """Runs a notification callback (plain or async) without blocking the caller."""
    out = fn(*args)
    if inspect.isawaitable(out):
        task = asyncio.ensure_future(out)
        loop_tasks.add(task)
        task.add_done_callback(loop_tasks.discard)


class Client:
    """A connection to one MCP server.

    Every way of opening one takes ``protocol_version`` (one revision, e.g. ``"2025-06-18"``)
    or ``era`` (``"handshake"`` / ``"stateless"``: the newest revision of that era) to pin the
    revision and skip the ``server/discover`` probe, which an old server that ignores it makes
    wait for its timeout. Without either the client probes, then falls back to ``initialize``.
    """

    def __init__(self, native: _native.NativeClient, tasks: set[asyncio.Task[Any]]) -> None:
        self._native = native
        self._tasks = tasks

    # --- opening ---------------------------------------------------------------------------

    @staticmethod
    def _config(
        name: str | None,
        version: str | None,
        protocol_version: str | None,
        era: str | None,
        timeout: float | None,
        log_level: str | None,
        sampling_callback: Callback | None,
        elicitation_callback: Callback | None,
        list_roots_callback: Callback | None,
        logging_callback: Callback | None,
        list_changed_callback: Callback | None,
        resource_updated_callback: Callback | None,
        message_handler: Callback | None,
        tasks: set[asyncio.Task[Any]],
    ) -> dict[str, Any]:
        roots = None
        if list_roots_callback is not None:
            roots = _roots_adapter(list_roots_callback)

        def on_notification(method: str, params: Any) -> None:
            params = params or {}
            if method == "notifications/message" and logging_callback is not None:
                _maybe_await(tasks, logging_callback, params)
            elif method.endswith("/list_changed") and list_changed_callback is not None:
                kind = method.removeprefix("notifications/").removesuffix("/list_changed")
                _maybe_await(tasks, list_changed_callback, kind)
            elif method == "notifications/resources/updated" and resource_updated_callback:
                _maybe_await(tasks, resource_updated_callback, params.get("uri"))
            if message_handler is not None:
                _maybe_await(tasks, message_handler, method, params)

        return {
            "name": name,
            "version": version,
            "protocol_version": protocol_version,
            "era": era,
            "timeout": timeout,
            "log_level": log_level,
            "sampling": sampling_callback,
            "elicitation": elicitation_callback,
            "roots": roots,
            "on_notification": on_notification,
        }

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool = False,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str | None = None,
        timeout: float | None = None,
        log_level: str | None = None,
        sampling_callback: Callback | None = None,
        elicitation_callback: Callback | None = None,
        list_roots_callback: Callback | None = None,
        logging_callback: Callback | None = None,
        list_changed_callback: Callback | None = None,
        resource_updated_callback: Callback | None = None,
        message_handler: Callback | None = None,
    ) -> Opening[Client]:
        """Starts ``command args...`` (never through a shell) and connects over its stdio.

        The child gets a minimal environment (PATH, HOME, ...) plus ``env``, unless
        ``inherit_env=True``. It is shut down (stdin closed, then SIGTERM, then SIGKILL to its
        process group) when the client closes, and dies with this process.
        """

        async def open_() -> Client:
            tasks: set[asyncio.Task[Any]] = set()
            config = cls._config(
                name,
                version,
                protocol_version,
                era,
                timeout,
                log_level,
                sampling_callback,
                elicitation_callback,
                list_roots_callback,
                logging_callback,
                list_changed_callback,
                resource_updated_callback,
                message_handler,
                tasks,
            )
            native = await _native.NativeClient.connect_stdio(
                command,
                list(args),
                list(env.items()) if env else None,
                cwd,
                config,
                inherit_env,
            )
            return cls(native, tasks)

        return Opening(open_)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: OAuth | None = None,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str | None = None,
        timeout: float | None = None,
        log_level: str | None = None,
        sampling_callback: Callback | None = None,
        elicitation_callback: Callback | None = None,
        list_roots_callback: Callback | None = None,
        logging_callback: Callback | None = None,
        list_changed_callback: Callback | None = None,
        resource_updated_callback: Callback | None = None,
        message_handler: Callback | None = None,
    ) -> Opening[Client]:
        """Connects to a Streamable HTTP server (falling back to legacy HTTP+SSE). With
        ``auth=OAuth(...)`` a 401 from the server runs the OAuth 2.1 flow (see
        :class:`oxmcp.OAuth`) and the request is sent again with the token."""

        async def open_() -> Client:
            tasks: set[asyncio.Task[Any]] = set()
            config = cls._config(
                name,
                version,
                protocol_version,
                era,
                timeout,
                log_level,
                sampling_callback,
                elicitation_callback,
                list_roots_callback,
                logging_callback,
                list_changed_callback,
                resource_updated_callback,
                message_handler,
                tasks,
            )
            native = await _native.NativeClient.connect_http(
                url,
                list(headers.items()) if headers else None,
                config,
                auth.settings() if auth is not None else None,
            )
            return cls(native, tasks)

        return Opening(open_)

    @classmethod
    def websocket(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        max_message_bytes: int | None = None,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str | None = None,
        timeout: float | None = None,
        log_level: str | None = None,
        sampling_callback: Callback | None = None,
        elicitation_callback: Callback | None = None,
        list_roots_callback: Callback | None = None,
        logging_callback: Callback | None = None,
        list_changed_callback: Callback | None = None,
        resource_updated_callback: Callback | None = None,
        message_handler: Callback | None = None,
    ) -> Opening[Client]:
        """Connects to a WebSocket server (``ws://`` or ``wss://``), one socket for the
        session. ``headers`` go on the upgrade request (``Authorization``, say);
        ``connect_timeout`` (seconds) bounds TCP, TLS and the upgrade together and raises
        :class:`oxmcp.RequestTimeoutError`; ``timeout`` bounds each call, as for :meth:`http`.
        An inbound message over ``max_message_bytes`` (16 MiB by default) closes the socket."""

        async def open_() -> Client:
            tasks: set[asyncio.Task[Any]] = set()
            config = cls._config(
                name,
                version,
                protocol_version,
                era,
                timeout,
                log_level,
                sampling_callback,
                elicitation_callback,
                list_roots_callback,
                logging_callback,
                list_changed_callback,
                resource_updated_callback,
                message_handler,
                tasks,
            )
            native = await _native.NativeClient.connect_ws(
                url,
                list(headers.items()) if headers else None,
                config,
                connect_timeout,
                max_message_bytes,
            )
            return cls(native, tasks)

        return Opening(open_)

    # --- what the server said --------------------------------------------------------------

    @property
    def server(self) -> ServerDetails:
        """``protocolVersion``, ``serverInfo``, ``capabilities``, ``instructions``."""
        return cast(ServerDetails, self._native.server)

    @property
    def protocol_version(self) -> str:
        return self.server["protocolVersion"]

    @property
    def is_closed(self) -> bool:
        return self._native.is_closed

    # --- requests --------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress_callback: Callback | None = None,
    ) -> dict[str, Any]:
        """Any request, for methods without a helper here."""
        result: dict[str, Any] = await self._native.request(
            method, params, timeout, self._progress(progress_callback)
        )
        return result

    def _progress(self, cb: Callback | None) -> Callback | None:
        if cb is None:
            return None
        tasks = self._tasks

        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            _maybe_await(tasks, cb, progress, total, message)

        return on_progress

    async def ping(self) -> None:
        await self._native.ping()

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        return cast(ListToolsResult, await self._native.list_tools(cursor))

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress_callback: Callback | None = None,
    ) -> CallToolResult:
        """Calls a tool. A failing tool is a result with ``isError: True``, not an exception."""
        out = await self._native.call_tool(
            name, arguments, timeout, self._progress(progress_callback)
        )
        return cast(CallToolResult, out)

    async def call_tool_as_task(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: float | None = None,
    ) -> TaskHandle:
        """Calls a tool as a task and returns its handle at once (``ttl``: how long, in
        seconds, the server should keep it; servers clamp it). A server without tasks gets a
        plain call, whose result the handle holds (its ``id`` is then ``None``)."""
        from .tasks import TaskHandle

        return TaskHandle(await self._native.call_tool_as_task(name, arguments, ttl))

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task created earlier, by this connection or another."""
        from .tasks import TaskHandle

        return TaskHandle(self._native.task(task_id))

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        out = await self.request("resources/list", _cursor(cursor))
        return cast(ListResourcesResult, out)

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        out = await self.request("resources/templates/list", _cursor(cursor))
        return cast(ListResourceTemplatesResult, out)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        out = await self.request("resources/read", {"uri": str(uri)}, timeout=timeout)
        return cast(ReadResourceResult, out)

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": str(uri)})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": str(uri)})

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        return cast(ListPromptsResult, await self.request("prompts/list", _cursor(cursor)))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        params = {"name": name, "arguments": dict(arguments or {})}
        return cast(GetPromptResult, await self.request("prompts/get", params))

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None = None,
    ) -> CompleteResult:
        """``completion/complete``: ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``; ``argument`` is ``{"name", "value"}``."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context_arguments:
            params["context"] = {"arguments": dict(context_arguments)}
        return cast(CompleteResult, await self.request("completion/complete", params))

    async def set_logging_level(self, level: str) -> None:
        await self._native.set_logging_level(level)

    async def send_roots_list_changed(self) -> None:
        await self._native.send_roots_list_changed()

    async def close(self) -> None:
        """Closes the connection (a child server is shut down and reaped)."""
        await self._native.close()
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _cursor(cursor: str | None) -> dict[str, Any] | None:
    return {"cursor": cursor} if cursor else None


def _roots_adapter(cb: Callback) -> Callback:
    """A roots callback may return a list of roots (dicts or URIs) or ``{"roots": [...]}``."""

    def shape(value: Any) -> Any:
        if isinstance(value, dict):
            return value
        return {"roots": [{"uri": r} if isinstance(r, str) else r for r in value]}

    if inspect.iscoroutinefunction(cb):

        async def roots_async() -> Any:
            return shape(await cb())

        return roots_async

    def roots() -> Any:
        return shape(cb())

    return roots
