"""Following a tool call that runs as a task: ``handle = await client.call_tool_as_task(...)``
gives ``await handle.status()``, ``await handle.result()``, ``await handle.cancel()`` and
``async for status in handle``. The native handle does the work (the era's form, polling at
the server's interval, answering the task's questions with the client's callbacks); this
class gives it Python's shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ._native import NativeTaskHandle
    from .types import CallToolResult, Task


class TaskHandle:
    """A tool call running as a task on the server. It outlives the connection that created
    it: ``client.task(handle.id)`` finds it again from another one."""

    def __init__(self, native: NativeTaskHandle) -> None:
        self._native = native

    @property
    def id(self) -> str | None:
        """The task's id; ``None`` when the server answered at once (it offers no tasks)."""
        return self._native.id

    async def status(self) -> Task:
        """The task's current status (``tasks/get``)."""
        return cast("Task", await self._native.status())

    async def result(self) -> CallToolResult:
        """Waits for the task to end and returns the tool's result (a tool error is a result
        with ``isError``). A failed task raises its error (``RpcError``); a cancelled one
        ``RequestCancelledError``."""
        return cast("CallToolResult", await self._native.result())

    async def cancel(self) -> None:
        """Asks the server to cancel the task; harmless once it has finished."""
        await self._native.cancel()

    async def __aiter__(self) -> AsyncIterator[Task]:
        """The status each time it changes, the final one last."""
        while True:
            update = await self._native.next_update()
            if update is None:
                return
            yield cast("Task", update)

    def __repr__(self) -> str:
        return f"TaskHandle(id={self.id!r})"
