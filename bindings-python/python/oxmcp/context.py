"""The :class:`Context` a handler receives when one of its parameters is annotated with it:
progress, logging, sampling, elicitation, roots, the request's identity and cancellation.

``sample``, ``elicit`` and ``list_roots`` work the same in both protocol eras. In the
stateless one (2026-07-28) the core ends the round with an ``InputRequiredResult`` and runs
the handler again when the client retries with the answer, so **work done before such a call
must be safe to repeat**. They need an ``async def`` handler (they are awaited). Their
``key=`` names the question in that round's ``inputRequests`` (by default the core numbers
them, ``elicit-0``, ``sample-1``, ...); the handshake era ignores it.

Questions asked side by side (``asyncio.gather(ctx.elicit(...), ctx.sample(...))``) reach
the core together: every question started in one tick of the event loop goes over in one
``ask_all`` call, so a 2026-07-28 round carries them all instead of one per retry.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from .types import CreateMessageResult, ElicitResult, ListRootsResult

if TYPE_CHECKING:
    from ._native import NativeContext

__all__ = ["Context"]


class Context:
    """One request's context."""

    __slots__ = ("_batch", "_native")

    def __init__(self, native: NativeContext) -> None:
        self._native = native
        self._batch: list[tuple[dict[str, Any], asyncio.Future[Any]]] | None = None

    def _ask(self, kind: str, params: dict[str, Any], key: str | None) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        if self._batch is None:
            self._batch = []
            loop.call_soon(self._flush)
        self._batch.append(({"kind": kind, "params": params, "key": key}, answer))
        return answer

    def _flush(self) -> None:
        batch, self._batch = self._batch or [], None
        answers = [a for _, a in batch]
        try:
            pending = self._native.ask_all([q for q, _ in batch])
        except BaseException as e:  # a question the binding could not even hand over
            for a in answers:
                if not a.done():
                    a.set_exception(e)
            return

        def deliver(done: asyncio.Future[Any]) -> None:
            if done.cancelled():
                for a in answers:
                    a.cancel()
                return
            error = done.exception()
            results = [error] * len(answers) if error is not None else done.result()
            for a, r in zip(answers, results, strict=True):
                if a.done():
                    continue
                if isinstance(r, BaseException):
                    a.set_exception(r)
                else:
                    a.set_result(r)

        def abandoned(_: asyncio.Future[Any]) -> None:
            # Every asker gave up (its task was cancelled, by the client say): so does the core.
            if all(a.cancelled() for a in answers):
                pending.cancel()

        pending.add_done_callback(deliver)
        for a in answers:
            a.add_done_callback(abandoned)

    @property
    def request_id(self) -> int | str:
        """The JSON-RPC id of the request."""
        return self._native.request_id

    @property
    def method(self) -> str:
        return self._native.method

    @property
    def protocol_version(self) -> str | None:
        return self._native.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """``clientInfo`` as the client sent it (``name``, ``version``, ...)."""
        return self._native.client_info

    @property
    def client_capabilities(self) -> dict[str, Any] | None:
        return self._native.client_capabilities

    @property
    def meta(self) -> dict[str, Any] | None:
        return self._native.meta

    @property
    def is_cancelled(self) -> bool:
        """Whether the client cancelled the request (an ``async def`` handler is also
        cancelled outright: it sees ``asyncio.CancelledError``)."""
        return self._native.is_cancelled

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared ``capability`` (``sampling``, ``elicitation``,
        ``roots``, ...) for this request."""
        return self._native.client_supports(capability)

    async def close_stream(self) -> None:
        """Ends this request's HTTP response stream early; the client reconnects with
        ``Last-Event-ID`` and the rest of the answer arrives on the resumed stream. A no-op
        on stdio and on JSON-only responses."""
        await self._native.close_stream()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await self._native.report_progress(progress, total, message)

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as, once it is one."""
        return self._native.task_id

    async def start_task(self) -> str | None:
        """Turns this call into a task, for a tool registered with ``task_start="deferred"``:
        the client gets the task's id now and the handler goes on. Questions asked before this
        are asked within the request; after it they belong to the task. Returns the task's id,
        or ``None`` when the call is not a task (the client did not ask for one)."""
        return cast("str | None", await self._native.start_task())

    async def report_status(self, message: str) -> None:
        """Says what the task is doing (its ``statusMessage`` in ``tasks/get``); nothing for a
        call that is not a task."""
        await self._native.report_status(message)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """``notifications/message`` at ``level`` (debug, info, notice, warning, error, ...)."""
        await self._native.log(level, data, logger)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 512,
        system_prompt: str | None = None,
        key: str | None = None,
        **params: Any,
    ) -> CreateMessageResult:
        """Asks the client's model. ``messages`` is a prompt string or the wire's messages."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        body: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **params}
        if system_prompt is not None:
            body["systemPrompt"] = system_prompt
        result: CreateMessageResult = await self._ask("sample", body, key)
        return result

    async def elicit(
        self, message: str, schema: Any = None, *, key: str | None = None, **params: Any
    ) -> ElicitResult:
        """Asks the user. ``schema`` is a JSON Schema dict or a pydantic model class; an
        accepted answer is checked against it by the core."""
        body: dict[str, Any] = {"message": message, **params}
        if schema is not None:
            if isinstance(schema, dict):
                body["requestedSchema"] = schema
            else:
                from ._signature import _strip_titles

                body["requestedSchema"] = _strip_titles(schema.model_json_schema())
        elif "url" not in params:
            body["requestedSchema"] = {"type": "object", "properties": {}}
        if "url" in params:
            body.setdefault("mode", "url")
        result: ElicitResult = await self._ask("elicit", body, key)
        return result

    async def list_roots(self, *, key: str | None = None) -> ListRootsResult:
        result: ListRootsResult = await self._ask("roots", {}, key)
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._native.notify(method, params)
