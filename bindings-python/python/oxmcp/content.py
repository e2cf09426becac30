"""Content helpers a tool can return: :class:`Image`, :class:`Audio` and
:class:`EmbeddedResource`. Each turns into one content block of the wire."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

__all__ = ["Image", "Audio", "EmbeddedResource", "to_block"]


class _Media:
    """An image or audio block: raw bytes (or base64 text) or a file. The two differ only in
    the block's ``type`` and the MIME type assumed when neither the caller nor the file's
    name gives one."""

    _type: str
    _fallback_mime: str

    def __init__(
        self,
        data: bytes | str | None = None,
        *,
        path: str | Path | None = None,
        mime_type: str | None = None,
    ) -> None:
        if (data is None) == (path is None):
            raise ValueError(f"{type(self).__name__}: give exactly one of data= or path=")
        file = Path(path) if path is not None else None
        if file is not None:
            self.data = base64.b64encode(file.read_bytes()).decode("ascii")
        elif isinstance(data, bytes):
            self.data = base64.b64encode(data).decode("ascii")
        else:
            assert data is not None
            self.data = data  # already base64
        self.mime_type = mime_type or _guess_mime(file) or self._fallback_mime

    def to_block(self) -> dict[str, Any]:
        return {"type": self._type, "data": self.data, "mimeType": self.mime_type}


def _guess_mime(path: Path | None) -> str | None:
    if path is None:
        return None
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed


class Image(_Media):
    """An image block: raw bytes (or base64 text) or a file."""

    _type = "image"
    _fallback_mime = "image/png"


class Audio(_Media):
    """An audio block: raw bytes (or base64 text) or a file."""

    _type = "audio"
    _fallback_mime = "audio/wav"


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
