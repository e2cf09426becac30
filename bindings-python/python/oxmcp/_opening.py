"""What ``Client.stdio(...)``, ``Client.http(...)`` and ``Host.from_config(...)`` return: a
connection being opened, which the caller either awaits (and closes later) or uses as an
async context manager (closed on exit). One class serves all three, so the two ways of
opening behave the same for clients and hosts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, Protocol, TypeVar


class _Closable(Protocol):
    async def close(self) -> None: ...


T = TypeVar("T", bound=_Closable)


class Opening(Generic[T]):
    """Await it for the opened object, or use it as an async context manager (closed on
    exit)."""

    def __init__(self, opener: Callable[[], Awaitable[T]]) -> None:
        self._opener = opener
        self._opened: T | None = None

    def __await__(self) -> Generator[Any, None, T]:
        return self._opener().__await__()

    async def __aenter__(self) -> T:
        self._opened = await self._opener()
        return self._opened

    async def __aexit__(self, *exc: object) -> None:
        if self._opened is not None:
            await self._opened.close()
