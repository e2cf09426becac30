"""The `echo` tool on oxmcp's Python binding, as a user would write it.

    python oxmcp_python_echo.py def|async stdio
    python oxmcp_python_echo.py def|async http PORT

With BENCH_TOOLS=N it registers N more tools (the catalogue rows).
"""

import os
import sys

from oxmcp import Server

server = Server("echo", version="1.0.0")

if sys.argv[1] == "async":

    @server.tool(description="Echo the text")
    async def echo(text: str) -> str:
        return text

else:

    @server.tool(description="Echo the text")
    def echo(text: str) -> str:
        return text


def catalogue_tool(i: int) -> None:
    def tool_n(n: int = 0) -> str:
        return str(i)

    server.tool(name=f"tool_{i}", description=f"Tool number {i} of the catalogue")(tool_n)


for i in range(int(os.environ.get("BENCH_TOOLS", "0"))):
    catalogue_tool(i)

if sys.argv[2] == "stdio":
    server.run()
else:
    # JSON responses, the mode the raw hyper limit answers in (as the Node row does).
    server.run("http", host="127.0.0.1", port=int(sys.argv[3]), json_response=True)
