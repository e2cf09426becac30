"""The server API: :class:`Server` with decorators for tools, resources, prompts and
completions, and ``run`` / ``serve_stdio`` / ``serve_http`` / ``serve_ws`` to serve them.

Registration converts a Python function into a definition (schemas from its annotations,
through pydantic only for models, dataclasses and the like) and hands both to the native
server; from then on the core does the protocol and calls the function back: a ``def`` on
the runtime worker that polls the request (no thread or event-loop hop), an ``async def`` on
the loop the server was started from. An ``async def`` tool whose body can never suspend (no
``await``, ``async for`` or ``async with``) and does not reach for the running loop is run
like a ``def``: its coroutine is driven to the end on the worker, sparing the hop.
"""

from __future__ import annotations

import asyncio
import dis
import inspect
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from . import _native
from .context import Context
from .errors import InvalidArgumentError
from .types import AccessClaims

__all__ = ["Server", "HttpServer", "WsServer", "TokenVerifier"]

F = TypeVar("F", bound=Callable[..., Any])

TaskSupport = Literal["optional", "required"]
"""Whether a tool's calls may (``optional``) or must (``required``) run as tasks."""

TaskStart = Literal["immediately", "deferred"]
"""When a task tool's call becomes a task: before its handler runs, or when it calls
``ctx.start_task()``."""

#: ``auth=``: the bearer token in, its claims (or ``None`` for an unknown token) out.
TokenVerifier = Callable[[str], AccessClaims | Awaitable[AccessClaims | None] | None]


def _is_async(fn: Callable[..., Any]) -> bool:
    # A callable object whose __call__ is `async def` counts too.
    call = type(fn).__call__ if not inspect.isfunction(fn) else None
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


#: The opcodes where a coroutine can suspend (3.10: YIELD_FROM; 3.11+: SEND/YIELD_VALUE).
_SUSPENDING = frozenset(
    {
        "YIELD_VALUE",
        "YIELD_FROM",
        "SEND",
        "GET_AWAITABLE",
        "GET_AITER",
        "GET_ANEXT",
        "BEFORE_ASYNC_WITH",
        "END_ASYNC_FOR",
        "ASYNC_GEN_WRAP",
    }
)
#: Names that need the running loop on the calling thread (`create_task` fire-and-forget, a
#: `get_running_loop().call_soon(...)`): a coroutine that uses them stays on the loop.
_NEEDS_LOOP = frozenset(
    {
        "get_running_loop",
        "get_event_loop",
        "create_task",
        "ensure_future",
        "current_task",
        "all_tasks",
        "TaskGroup",
        "timeout",
        "run_coroutine_threadsafe",
        "sleep",
        "asyncio",
        "anyio",
    }
)


def _never_suspends(fn: Callable[..., Any]) -> bool:
    """Whether calling the coroutine function ``fn`` gives a coroutine that runs to its end
    on the first step, without the event loop: no suspension point in its own code, and no
    name that needs the loop. Nested functions have their own code and are not called here."""
    if not inspect.isfunction(fn) or not inspect.iscoroutinefunction(fn):
        return False
    code = fn.__code__
    if _NEEDS_LOOP & set(code.co_names):
        return False
    return not any(i.opname in _SUSPENDING for i in dis.get_instructions(code))


def _run_now(coroutine: Any) -> Any:
    """Drives a coroutine that cannot suspend to its result (see :func:`_never_suspends`)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("oxmcp: a coroutine judged unable to suspend did suspend")


class HttpServer:
    """A running Streamable HTTP server (``await server.serve_http(...)``). Use it as an
    async context manager, or call :meth:`shutdown`."""

    def __init__(self, native: _native.NativeHttpServer) -> None:
        self._native = native

    @property
    def url(self) -> str:
        return self._native.url

    @property
    def port(self) -> int:
        return self._native.port

    async def shutdown(self) -> None:
        await self._native.shutdown()

    async def __aenter__(self) -> HttpServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()


class WsServer:
    """A running WebSocket server (``await server.serve_ws(...)``). Use it as an async
    context manager, or call :meth:`shutdown`."""

    def __init__(self, native: _native.NativeWsServer) -> None:
        self._native = native

    @property
    def url(self) -> str:
        return self._native.url

    @property
    def port(self) -> int:
        return self._native.port

    async def shutdown(self) -> None:
        await self._native.shutdown()

    async def __aenter__(self) -> WsServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()


class Server:
    """An MCP server.

    >>> server = Server("weather")
    >>> @server.tool()
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city.'''
    ...     return f"sunny in {city}"
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        state_key: bytes | None = None,
    ) -> None:
        """``state_key`` (32 bytes) signs the ``requestState`` of multi round-trip requests
        (2026-07-28); replicas behind one load balancer must share it. By default each
        server picks a random one."""
        self.name = name
        self.version = version
        self._native = _native.NativeServer(name, version, instructions, state_key)

    # --- tools -----------------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        meta: dict[str, Any] | None = None,
        task: TaskSupport | bool | None = None,
        task_start: TaskStart = "immediately",
    ) -> Callable[[F], F]:
        """Registers a function as a tool (``def`` or ``async def``). ``task="optional"``
        (or ``True``) lets clients run its calls as tasks, ``"required"`` makes them; with
        ``task_start="deferred"`` a call becomes a task when the handler calls
        ``await ctx.start_task()``."""

        def register(fn: F) -> F:
            self.add_tool(
                fn,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                structured_output=structured_output,
                meta=meta,
                task=task,
                task_start=task_start,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        meta: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        task: TaskSupport | bool | None = None,
        task_start: TaskStart = "immediately",
    ) -> None:
        """Registers (or replaces) a tool at runtime; connected clients are told. ``task``
        and ``task_start`` are those of :meth:`tool`."""
        from . import _signature

        support = "optional" if task is True else (None if task is False else task)
        if task_start not in ("immediately", "deferred"):
            raise InvalidArgumentError(
                f"task_start must be 'immediately' or 'deferred', not {task_start!r}"
            )
        deferred = task_start == "deferred"

        derived = _signature.derive(fn, structured_output)
        tool: dict[str, Any] = {
            "name": name or fn.__name__,
            "inputSchema": input_schema or derived.input_schema,
        }
        desc = description if description is not None else derived.description
        if desc:
            tool["description"] = desc
        if title:
            tool["title"] = title
        wrapped = derived.wrapped
        if output_schema is not None:
            tool["outputSchema"] = output_schema
            wrapped = False
        elif derived.output_schema is not None:
            tool["outputSchema"] = derived.output_schema
        if annotations:
            tool["annotations"] = annotations
        if meta:
            tool["_meta"] = meta
        is_async = _is_async(fn)
        ctx_param = derived.context_param
        convert_args = _signature.arguments
        jsonable = _signature.jsonable
        raw_args = input_schema is not None  # a hand-written schema: arguments as given

        def kwargs_for(args: dict[str, Any], native_ctx: _native.NativeContext) -> dict[str, Any]:
            kwargs = args if raw_args else convert_args(derived, args)
            if ctx_param is not None:
                kwargs = {**kwargs, ctx_param: Context(native_ctx)}
            return kwargs

        if is_async and _never_suspends(fn):

            def call_now(args: dict[str, Any], native_ctx: _native.NativeContext) -> Any:
                return jsonable(_run_now(fn(**kwargs_for(args, native_ctx))))

            self._native.add_tool(tool, call_now, False, wrapped, support, deferred)
        elif is_async:

            async def call_async(args: dict[str, Any], native_ctx: _native.NativeContext) -> Any:
                return jsonable(await fn(**kwargs_for(args, native_ctx)))

            self._native.add_tool(tool, call_async, True, wrapped, support, deferred)
        else:

            def call(args: dict[str, Any], native_ctx: _native.NativeContext) -> Any:
                return jsonable(fn(**kwargs_for(args, native_ctx)))

            self._native.add_tool(tool, call, False, wrapped, support, deferred)

    def remove_tool(self, name: str) -> bool:
        """Removes a tool; connected clients are told. Whether it existed."""
        return self._native.remove_tool(name)

    def list_tools(self) -> list[dict[str, Any]]:
        """The registered tools, as ``tools/list`` sends them."""
        return self._native.tools()

    # --- resources -------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
    ) -> Callable[[F], F]:
        """Registers a resource. A URI with ``{variables}`` is a template; the function takes
        them as keyword arguments. It returns ``str`` (text), ``bytes`` (blob), a dict with
        ``contents``, or ``None`` for "not found"."""

        def register(fn: F) -> F:
            self.add_resource(
                fn, uri, name=name, title=title, description=description, mime_type=mime_type
            )
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
    ) -> None:
        from ._signature import _docstring

        summary, _ = _docstring(fn)
        templated = "{" in uri
        definition: dict[str, Any] = {"name": name or fn.__name__}
        definition["uriTemplate" if templated else "uri"] = uri
        if title:
            definition["title"] = title
        if description or summary:
            definition["description"] = description or summary
        if mime_type:
            definition["mimeType"] = mime_type
        params = inspect.signature(fn).parameters
        ctx_param = next((p for p, v in params.items() if _annotation_is_context(fn, p, v)), None)
        wants_uri = "uri" in params and not templated
        is_async = _is_async(fn)

        def contents(read_uri: str, value: Any) -> Any:
            return _resource_contents(read_uri, value, mime_type)

        def kwargs_for(read_uri: str, variables: dict[str, Any], native_ctx: Any) -> dict[str, Any]:
            kwargs = dict(variables)
            if wants_uri:
                kwargs["uri"] = read_uri
            if ctx_param is not None:
                kwargs[ctx_param] = Context(native_ctx)
            return kwargs

        if is_async:

            async def read_async(read_uri: str, variables: dict[str, Any], native_ctx: Any) -> Any:
                return contents(read_uri, await fn(**kwargs_for(read_uri, variables, native_ctx)))

            handler: Callable[..., Any] = read_async
        else:

            def read(read_uri: str, variables: dict[str, Any], native_ctx: Any) -> Any:
                return contents(read_uri, fn(**kwargs_for(read_uri, variables, native_ctx)))

            handler = read
        if templated:
            self._native.add_resource_template(definition, handler, is_async)
        else:
            self._native.add_resource(definition, handler, is_async)

    def remove_resource(self, uri: str) -> bool:
        return self._native.remove_resource(uri)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells subscribed clients that ``uri`` changed."""
        self._native.notify_resource_updated(uri)

    # --- prompts ---------------------------------------------------------------------------

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
    ) -> Callable[[F], F]:
        """Registers a prompt. Its parameters are the prompt's arguments (strings; those
        without a default are required). It returns a string (one user message), a list of
        messages (``{"role", "content"}``, or strings), or a whole ``GetPromptResult``."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, title=title, description=description)
            return fn

        return register

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> None:
        from ._signature import _docstring

        summary, param_docs = _docstring(fn)
        params = inspect.signature(fn).parameters
        ctx_param = next((p for p, v in params.items() if _annotation_is_context(fn, p, v)), None)
        arguments = []
        for pname, p in params.items():
            if pname == ctx_param or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            arg: dict[str, Any] = {"name": pname, "required": p.default is inspect.Parameter.empty}
            if pname in param_docs:
                arg["description"] = param_docs[pname]
            arguments.append(arg)
        definition: dict[str, Any] = {"name": name or fn.__name__, "arguments": arguments}
        if title:
            definition["title"] = title
        if description or summary:
            definition["description"] = description or summary
        is_async = _is_async(fn)

        def kwargs_for(args: dict[str, str], native_ctx: Any) -> dict[str, Any]:
            kwargs: dict[str, Any] = dict(args)
            if ctx_param is not None:
                kwargs[ctx_param] = Context(native_ctx)
            return kwargs

        if is_async:

            async def get_async(args: dict[str, str], native_ctx: Any) -> Any:
                return _prompt_result(await fn(**kwargs_for(args, native_ctx)))

            self._native.add_prompt(definition, get_async, True)
        else:

            def get(args: dict[str, str], native_ctx: Any) -> Any:
                return _prompt_result(fn(**kwargs_for(args, native_ctx)))

            self._native.add_prompt(definition, get, False)

    def remove_prompt(self, name: str) -> bool:
        return self._native.remove_prompt(name)

    # --- completions -----------------------------------------------------------------------

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Completes one argument of a prompt (``prompt="name"``) or one variable of a
        resource template (``resource="scheme://{var}"``). The function takes
        ``(value, context)`` (``context``: the arguments already chosen) and returns a list of
        strings or a ``Completion`` dict."""
        if (prompt is None) == (resource is None):
            raise ValueError("completion: give exactly one of prompt= or resource=")

        def register(fn: F) -> F:
            is_async = _is_async(fn)
            if is_async:

                async def complete_async(value: str, context: dict[str, str], _ctx: Any) -> Any:
                    return _completion(await fn(value, context))

                handler: Callable[..., Any] = complete_async
            else:

                def complete(value: str, context: dict[str, str], _ctx: Any) -> Any:
                    return _completion(fn(value, context))

                handler = complete
            if prompt is not None:
                self._native.add_prompt_completion(prompt, argument, handler, is_async)
            else:
                assert resource is not None
                self._native.add_template_completion(resource, argument, handler, is_async)
            return fn

        return register

    # --- serving ---------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serves this process's stdin/stdout until the client hangs up. While serving, fd 1
        and ``sys.stdout`` point at stderr, so ``print()`` never corrupts the protocol."""
        sys.stdout.flush()
        saved = sys.stdout
        sys.stdout = sys.stderr
        try:
            await self._native.serve_stdio()
        finally:
            sys.stdout = saved

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        allowed_hosts: list[str] | None = None,
        sse_retry: float | None = None,
        store: str | None = None,
        auth: TokenVerifier | None = None,
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        required_scopes: list[str] | None = None,
        resource_name: str | None = None,
        allowed_origins: list[str] | None = None,
        websocket: bool = False,
        max_message_bytes: int | None = None,
    ) -> HttpServer:
        """Starts Streamable HTTP (and the legacy HTTP+SSE endpoints) and returns once it
        listens. ``port=0`` picks a free port (see ``.url``).

        ``store="redis://HOST:PORT/"`` shares sessions, event logs and server-to-client
        requests with the other replicas using the same store (give them one ``state_key``).

        ``auth=verify_token`` makes the endpoint an OAuth resource server: ``verify_token``
        (``def`` or ``async def``) gets each request's bearer token and returns its claims,
        ``{"subject", "client_id", "scopes", "audience", "expires_at"}``, or ``None`` when it
        does not know the token. The core answers 401/403 with ``WWW-Authenticate``, checks
        expiry, that ``audience`` names ``resource`` (default ``http://HOST:PORT/PATH``) and
        that ``required_scopes`` are granted, and serves the protected-resource metadata
        naming ``authorization_servers``.

        ``websocket=True`` also accepts WebSocket upgrades on ``path`` (``ws://HOST:PORT/PATH``;
        messages up to ``max_message_bytes``, 16 MiB by default)."""
        native = await self._native.serve_http(
            host,
            port,
            path,
            stateless,
            json_response,
            allowed_hosts,
            None if sse_retry is None else max(0, round(sse_retry * 1000)),
            store,
            auth,
            auth is not None and _is_async(auth),
            resource,
            authorization_servers,
            required_scopes,
            resource_name,
            allowed_origins,
            websocket,
            max_message_bytes,
        )
        return HttpServer(native)

    async def serve_ws(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_message_bytes: int | None = None,
        auth: TokenVerifier | None = None,
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        required_scopes: list[str] | None = None,
        resource_name: str | None = None,
        ping_interval: float | None = None,
        ping_timeout: float | None = None,
    ) -> WsServer:
        """Serves WebSocket alone (one socket per session) and returns once it listens;
        ``port=0`` picks a free port (see ``.url``, ``ws://HOST:PORT/PATH``). ``Host`` and
        ``Origin`` are checked before the upgrade (``allowed_origins`` defaults to the allowed
        hosts' origins); a message over ``max_message_bytes`` (16 MiB by default) closes the
        socket with 1009. The server pings every ``ping_interval`` seconds (20 by default; 0:
        never) and closes a peer silent ``ping_timeout`` seconds past a ping (20) with 1011.
        ``auth`` and the rest are those of :meth:`serve_http`, checked on the upgrade request
        (``resource`` defaults to ``ws://HOST:PORT/PATH``)."""
        native = await self._native.serve_ws(
            host,
            port,
            path,
            allowed_hosts,
            allowed_origins,
            max_message_bytes,
            auth,
            auth is not None and _is_async(auth),
            resource,
            authorization_servers,
            required_scopes,
            resource_name,
            ping_interval,
            ping_timeout,
        )
        return WsServer(native)

    def run(
        self,
        transport: Literal["stdio", "http", "ws"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        store: str | None = None,
        auth: TokenVerifier | None = None,
        resource: str | None = None,
        authorization_servers: list[str] | None = None,
        required_scopes: list[str] | None = None,
        websocket: bool = False,
    ) -> None:
        """Serves until the client hangs up (stdio) or the process is interrupted (http, ws).
        ``store``, ``auth``, ``websocket`` and the rest are those of :meth:`serve_http`;
        ``"ws"`` serves WebSocket alone (:meth:`serve_ws`, which takes no ``store``,
        ``stateless`` or ``json_response``)."""
        if transport == "stdio":
            _run(self.serve_stdio())
        elif transport == "http":

            async def forever() -> None:
                http = await self.serve_http(
                    host,
                    port,
                    path=path,
                    stateless=stateless,
                    json_response=json_response,
                    store=store,
                    auth=auth,
                    resource=resource,
                    authorization_servers=authorization_servers,
                    required_scopes=required_scopes,
                    websocket=websocket,
                )
                print(f"listening on {http.url}", file=sys.stderr, flush=True)
                try:
                    await asyncio.Event().wait()
                finally:
                    await http.shutdown()

            _run(forever())
        elif transport == "ws":
            if store is not None or stateless or json_response or websocket:
                raise ValueError(
                    "run('ws') takes no store, stateless, json_response or websocket "
                    "(use run('http', websocket=True) to serve both)"
                )

            async def forever_ws() -> None:
                ws = await self.serve_ws(
                    host,
                    port,
                    path=path,
                    auth=auth,
                    resource=resource,
                    authorization_servers=authorization_servers,
                    required_scopes=required_scopes,
                )
                print(f"listening on {ws.url}", file=sys.stderr, flush=True)
                try:
                    await asyncio.Event().wait()
                finally:
                    await ws.shutdown()

            _run(forever_ws())
        else:
            raise ValueError(f"unknown transport {transport!r} (use 'stdio', 'http' or 'ws')")


def _run(main: Awaitable[None]) -> None:
    """``asyncio.run(main)``, where Ctrl-C (SIGINT) ends ``main`` quietly.

    ``asyncio.run`` catches SIGINT with a plain ``signal.signal`` handler, which Python runs
    only once the main thread wakes up; a signal that lands on another thread, or just before
    the loop goes to sleep, leaves a serving loop (whose work is all on the runtime's threads)
    asleep until its next timer, or for ever. A loop signal handler also writes to the loop's
    wakeup pipe, from whichever thread the signal lands on, so the loop wakes at once."""

    async def interruptible() -> None:
        task = asyncio.current_task()
        event_loop = asyncio.get_running_loop()
        interrupted = False

        def on_sigint() -> None:
            nonlocal interrupted
            if interrupted:
                # A second Ctrl-C while shutting down: stop waiting for it.
                raise KeyboardInterrupt
            interrupted = True
            if task is not None:
                task.cancel()

        try:
            event_loop.add_signal_handler(signal.SIGINT, on_sigint)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            # Windows, or not the main thread: asyncio.run's own handling stays.
            installed = False
        try:
            await main
        finally:
            if installed:
                event_loop.remove_signal_handler(signal.SIGINT)

    try:
        asyncio.run(interruptible())
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass


def _annotation_is_context(fn: Callable[..., Any], name: str, p: inspect.Parameter) -> bool:
    from ._signature import _is_context

    try:
        import typing

        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):
        hints = {}
    return _is_context(hints.get(name, p.annotation))


def _resource_contents(uri: str, value: Any, mime_type: str | None) -> Any:
    if value is None:
        return None  # "not found"
    if isinstance(value, dict) and "contents" in value:
        return value
    item: dict[str, Any] = {"uri": uri}
    if isinstance(value, bytes):
        import base64

        item["blob"] = base64.b64encode(value).decode("ascii")
        item["mimeType"] = mime_type or "application/octet-stream"
    elif isinstance(value, str):
        item["text"] = value
        item["mimeType"] = mime_type or "text/plain"
    else:
        import json

        from ._signature import jsonable

        item["text"] = json.dumps(jsonable(value))
        item["mimeType"] = mime_type or "application/json"
    return {"contents": [item]}


def _message(m: Any) -> Any:
    if isinstance(m, str):
        return {"role": "user", "content": {"type": "text", "text": m}}
    from ._signature import jsonable

    m = jsonable(m)
    if isinstance(m, dict) and isinstance(m.get("content"), str):
        return {**m, "content": {"type": "text", "text": m["content"]}}
    return m


def _prompt_result(value: Any) -> Any:
    if isinstance(value, dict) and "messages" in value:
        return {**value, "messages": [_message(m) for m in value["messages"]]}
    if isinstance(value, (list, tuple)):
        return {"messages": [_message(m) for m in value]}
    return {"messages": [_message(value)]}


def _completion(value: Any) -> Any:
    if isinstance(value, dict):
        return value
    # The core truncates to the spec's 100 and sets total/hasMore.
    return {"values": list(value or [])}
