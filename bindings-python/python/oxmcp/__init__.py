"""oxmcp: Model Context Protocol clients and servers on one native engine.

>>> from oxmcp import Server, Client

Names are imported lazily (PEP 562), so ``import oxmcp`` costs only what you use: a client
never imports pydantic, a server imports it when its first tool is registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Server": "server",
    "HttpServer": "server",
    "WsServer": "server",
    "Client": "client",
    "Host": "host",
    "OAuth": "auth",
    "Context": "context",
    "Image": "content",
    "Audio": "content",
    "EmbeddedResource": "content",
    "McpError": "errors",
    "RpcError": "errors",
    "RequestTimeoutError": "errors",
    "RequestCancelledError": "errors",
    "ConnectionClosedError": "errors",
    "SpawnError": "errors",
    "TransportError": "errors",
    "ProtocolError": "errors",
    "UnsupportedProtocolVersionError": "errors",
    "InvalidSchemaError": "errors",
    "InvalidArgumentError": "errors",
    "ConfigError": "errors",
    "AuthError": "errors",
    "TaskRequiredError": "errors",
    "HandshakeIncompleteError": "errors",
    "ToolError": "errors",
    "TaskHandle": "tasks",
}

__all__ = [
    "Server",
    "HttpServer",
    "WsServer",
    "Client",
    "Host",
    "OAuth",
    "Context",
    "Image",
    "Audio",
    "EmbeddedResource",
    "McpError",
    "RpcError",
    "RequestTimeoutError",
    "RequestCancelledError",
    "ConnectionClosedError",
    "SpawnError",
    "TransportError",
    "ProtocolError",
    "UnsupportedProtocolVersionError",
    "InvalidSchemaError",
    "InvalidArgumentError",
    "ConfigError",
    "AuthError",
    "TaskRequiredError",
    "HandshakeIncompleteError",
    "ToolError",
    "TaskHandle",
    "types",
    "translate",
]

if TYPE_CHECKING:
    from . import translate, types
    from .auth import OAuth
    from .client import Client
    from .content import Audio, EmbeddedResource, Image
    from .context import Context
    from .errors import (
        AuthError,
        ConfigError,
        ConnectionClosedError,
        HandshakeIncompleteError,
        InvalidArgumentError,
        InvalidSchemaError,
        McpError,
        ProtocolError,
        RequestCancelledError,
        RequestTimeoutError,
        RpcError,
        SpawnError,
        TaskRequiredError,
        ToolError,
        TransportError,
        UnsupportedProtocolVersionError,
    )
    from .host import Host
    from .server import HttpServer, Server, WsServer
    from .tasks import TaskHandle


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        if name in ("types", "translate"):
            import importlib

            return importlib.import_module(f"oxmcp.{name}")
        raise AttributeError(f"module 'oxmcp' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"oxmcp.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
