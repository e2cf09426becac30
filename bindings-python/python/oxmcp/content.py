"""Content helpers a tool can return: :class:`Image`, :class:`Audio` and
:class:`EmbeddedResource`. Each turns into one content block of the wire."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

__all__ = ["Image", "Audio", "EmbeddedResource", "to_block"]


def _data(data: bytes | str | None, path: str | Path | None, what: str) -> tuple[str, Path | None]:
    if (data is None) == (path is None):
        raise ValueError(f"{what}: give exactly one of data= or path=")
    if path is not None:
        p = Path(path)
        return base64.b64encode(p.read_bytes()).decode("ascii"), p
    if isinstance(data, bytes):
        return base64.b64encode(data).decode("ascii"), None
    assert data is not None
    return data, None  # already base64


def _mime(given: str | None, path: Path | None, fallback: str) -> str:
    if given:
        return given
    if path is not None:
        guessed, _ = mimetypes.guess_type(path.name)
        if guessed:
            return guessed
    return fallback


class Image:
    """An image block: raw bytes (or base64 text) or a file."""

    def __init__(
        self,
        data: bytes | str | None = None,
        *,
        path: str | Path | None = None,
        mime_type: str | None = None,
    ) -> None:
        self.data, p = _data(data, path, "Image")
        self.mime_type = _mime(mime_type, p, "image/png")

    def to_block(self) -> dict[str, Any]:
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}


class Audio:
    """An audio block: raw bytes (or base64 text) or a file."""

    def __init__(
        self,
        data: bytes | str | None = None,
        *,
        path: str | Path | None = None,
        mime_type: str | None = None,
    ) -> None:
        self.data, p = _data(data, path, "Audio")
        self.mime_type = _mime(mime_type, p, "audio/wav")

    def to_block(self) -> dict[str, Any]:
        return {"type": "audio", "data": self.data, "mimeType": self.mime_type}


class EmbeddedResource:
    """A resource embedded in a result: text, or bytes (sent as base64 ``blob``)."""

    def __init__(self, uri: str, content: str | bytes, *, mime_type: str | None = None) -> None:
        self.uri = uri
        self.content = content
        self.mime_type = mime_type

    def to_block(self) -> dict[str, Any]:
        res: dict[str, Any] = {"uri": self.uri}
        if isinstance(self.content, bytes):
            res["blob"] = base64.b64encode(self.content).decode("ascii")
        else:
            res["text"] = self.content
        if self.mime_type:
            res["mimeType"] = self.mime_type
        return {"type": "resource", "resource": res}


_HELPERS = (Image, Audio, EmbeddedResource)


def to_block(value: Image | Audio | EmbeddedResource) -> dict[str, Any]:
    """The wire block of a helper."""
    return value.to_block()
