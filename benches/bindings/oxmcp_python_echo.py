"""The `echo` tool on oxmcp's Python binding, as a user would write it.

    python oxmcp_python_echo.py def|async stdio
    python oxmcp_python_echo.py def|async http PORT
"""

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


if sys.argv[2] == "stdio":
    server.run()
else:
    server.run("http", host="127.0.0.1", port=int(sys.argv[3]))
