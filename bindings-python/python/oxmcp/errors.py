"""The exceptions of oxmcp: one hierarchy under :class:`McpError`, one class per kind of
core error (``oxmcp::ErrorKind``). The native module maps every core error onto these.

A tool that fails is not an exception for the caller: it is a result with ``isError``.
Raise :class:`ToolError` in a tool to send its message to the model verbatim; raise an
:class:`McpError` with a ``code`` to answer with that JSON-RPC error instead.
"""

from __future__ import annotations

from typing import Any

__all__ = [
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
    "ToolError",
]


class McpError(Exception):
    """Base of every oxmcp error. ``code`` is the JSON-RPC code when there is one."""

    kind: str = "mcp"

    def __init__(
        self,
        message: str = "",
        *,
        code: int | None = None,
        data: Any = None,
        kind: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data
        if kind is not None:
            self.kind = kind
        for key, value in details.items():
            setattr(self, key, value)

    def __reduce__(self) -> Any:  # picklable across processes, attributes included
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


def _rebuild(cls: type[McpError], message: str, state: dict[str, Any]) -> McpError:
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class RpcError(McpError):
    """The peer answered with a JSON-RPC error (``code``, ``message``, ``data``)."""

    kind = "rpc"
    code: int


class RequestTimeoutError(McpError, TimeoutError):
    """No answer in time; ``notifications/cancelled`` was sent. ``method``, ``after`` (s)."""

    kind = "timeout"
    method: str
    after: float


class RequestCancelledError(McpError):
    """The request was cancelled."""

    kind = "cancelled"


class ConnectionClosedError(McpError, ConnectionError):
    """The connection ended; ``stderr`` holds the server's last stderr lines (child processes)."""

    kind = "connection_closed"
    stderr: str | None


class SpawnError(McpError, OSError):
    """A server process could not be started; ``command`` names it."""

    kind = "spawn"
    command: str


class TransportError(McpError, OSError):
    """An I/O error on the transport."""

    kind = "io"


class ProtocolError(McpError):
    """The peer sent something the protocol does not allow."""

    kind = "protocol"


class UnsupportedProtocolVersionError(McpError):
    """No revision both sides speak; ``requested`` and ``supported``."""

    kind = "unsupported_protocol_version"
    requested: str
    supported: list[str]


class InvalidSchemaError(McpError, ValueError):
    """A schema given to oxmcp (a tool's input or output schema) is not valid JSON Schema."""

    kind = "invalid_schema"


class InvalidArgumentError(McpError, ValueError):
    """The API was used in a way it does not allow."""

    kind = "invalid_argument"


class ConfigError(McpError, ValueError):
    """An ``mcpServers`` config is unusable; the message names the file, server and field."""

    kind = "config"
    file: str | None
    server: str | None
    field: str | None


class AuthError(McpError):
    """Authorization failed: discovery, registration, consent, a token request, or a server
    that refused every token offered."""

    kind = "auth"


class TaskRequiredError(McpError):
    """The tool only runs as a task and was called plainly: call it with
    ``client.call_tool_as_task`` (or ``host.call_tool(..., task=True)``). ``tool`` names it."""

    kind = "task_required"
    tool: str


class HandshakeIncompleteError(McpError):
    """A request to the client (sampling, elicitation, roots) was not sent: the client had not
    finished its handshake (``notifications/initialized``) in time, and until it does a server
    may ask it nothing but ``ping``."""

    kind = "handshake_incomplete"


class ToolError(Exception):
    """Raised in a tool: the call ends as an ``isError`` result with exactly this message."""
