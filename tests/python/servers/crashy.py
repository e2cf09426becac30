"""A stdio server that can be made to die mid-call (`die`), for the host's restart tests, and
that says on stderr when it starts (so a status can show its stderr tail)."""

from __future__ import annotations

import os
import sys

from oxmcp import Server

server = Server("crashy", "1.0.0")


@server.tool()
def hello(name: str) -> str:
    """Greets, with the process id (a restart shows a new one)."""
    return f"hello {name} from {os.getpid()}"


@server.tool()
def die() -> str:
    """Exits the process in the middle of the call."""
    print("crashy: dying on purpose", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    print("crashy: started", file=sys.stderr, flush=True)
    server.run()
