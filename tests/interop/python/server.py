"""An MCP server built with the official Python SDK (`mcp` 2.x `MCPServer`), on stdio.

oxmcp's interop tests (core/tests/interop) start this script as a child
process and drive it with oxmcp's client. The tools cover the shapes a client must
handle: a plain text result, a structured result with an output schema, a tool that
fails (isError), and argument validation done by the SDK itself.
"""

from importlib.metadata import version

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer(
    "python-interop",
    # The SDK's own version, so the Rust test can tell the pinned release is running.
    version=f"mcp-{version('mcp')}",
    instructions="Test server for oxmcp interop.",
)


class Sum(BaseModel):
    """The structured result of `add`."""

    sum: int


# structured_output=False keeps `greet` a plain text tool: without it the SDK wraps a
# `str` return in {"result": ...} and advertises an output schema.
@server.tool(structured_output=False)
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(sum=a + b)


@server.tool()
def fail(reason: str = "boom") -> str:
    """Always fails, with the given reason."""
    raise ToolError(f"tool failed: {reason}")


if __name__ == "__main__":
    server.run()
