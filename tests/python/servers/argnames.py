"""A stdio server whose tools use argument names LangChain takes for its own (`config`,
`run_manager`, `callbacks`), return structured output, and count calls per process (so a
client that opened a new session per call would see the count start again)."""

from __future__ import annotations

from oxmcp import Server, ToolError
from typing_extensions import TypedDict

server = Server("argnames", "1.0.0")
CALLS = 0


class Configured(TypedDict):
    config: str
    run_manager: str
    callbacks: int
    calls: int


@server.tool()
def configure(config: str, run_manager: str, callbacks: int = 0) -> Configured:
    """Echoes its arguments back as structured output, with the call count."""
    global CALLS
    CALLS += 1
    return {"config": config, "run_manager": run_manager, "callbacks": callbacks, "calls": CALLS}


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, as a tool error."""
    raise ToolError(f"refused: {reason}")


if __name__ == "__main__":
    server.run()
