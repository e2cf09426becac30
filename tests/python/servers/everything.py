"""A server on oxmcp's Python API exercising each boundary the tests check: def and async
def tools, structured and wrapped outputs, content helpers, failures of every kind, slow and
cancellable handlers, a printing handler, resources, templates, prompts and completions.

Run: python everything.py            (stdio)
     python everything.py --http     (Streamable HTTP on a free port; prints the URL)
     python everything.py --ws       (WebSocket via run("ws") on a free port; prints the URL)
"""

from __future__ import annotations

import asyncio
import enum
import sys
import threading
import time
from dataclasses import dataclass
from typing import Annotated, Literal

from oxmcp import Context, Image, McpError, Server, ToolError
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

server = Server("everything", "1.2.3", instructions="Test server for the Python binding.")
EVENTS: list[str] = []  # what handlers saw, for the events tool (cancellation checks)


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Point(BaseModel):
    x: int
    y: int = 0


class Shape(BaseModel):
    name: str
    points: list[Point]


class Options(TypedDict):
    verbose: bool


@dataclass
class Reading:
    value: float
    unit: str


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@server.tool()
async def echo(text: str, times: int = 1) -> str:
    """Echoes text."""
    await asyncio.sleep(0)
    return text * times


@server.tool()
def plain(text: str):  # type: ignore[no-untyped-def]
    """No return annotation: a string is one text block."""
    return text


@server.tool(name="shape_area", title="Shape area", annotations={"readOnlyHint": True})
def shape(
    shape: Shape,
    unit: Unit = Unit.C,
    mode: Literal["fast", "exact"] = "fast",
    note: Annotated[str | None, Field(description="a free note")] = None,
    options: Options | None = None,
) -> Reading:
    """Takes nested models, enums, literals, optionals and TypedDicts."""
    assert isinstance(shape, Shape) and isinstance(shape.points[0], Point)
    assert isinstance(unit, Unit)
    return Reading(value=float(len(shape.points)), unit=f"{unit.value}/{mode}/{note}")


@server.tool()
def weather_dict(city: str) -> dict[str, object]:
    return {"city": city, "temp": 21}


@server.tool()
def picture() -> Image:
    return Image(b"\x89PNG\r\n", mime_type="image/png")


@server.tool()
def blocks() -> list[Image | dict[str, str]]:
    return [Image(b"abc"), {"type": "text", "text": "and text"}]


@server.tool()
def fails(message: str) -> str:
    raise ValueError(message)


@server.tool()
def tool_error() -> str:
    raise ToolError("told the model exactly this")


@server.tool()
def protocol_error() -> str:
    raise McpError("refused on purpose", code=-32042, data={"why": "test"})


@server.tool()
def unserialisable():  # type: ignore[no-untyped-def]
    return {"value": object()}


@server.tool()
async def never_returns() -> str:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        EVENTS.append("never_returns cancelled")
        raise
    return "unreachable"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    try:
        for i in range(10):
            await ctx.report_progress(i, 10, f"step {i}")
            await asyncio.sleep(seconds / 10)
    except asyncio.CancelledError:
        EVENTS.append(f"slow cancelled {ctx.request_id}")
        raise
    return "done"


@server.tool()
def blocking_sleep(seconds: float) -> str:
    time.sleep(seconds)
    return f"slept on {threading.current_thread().name}"


@server.tool()
def events() -> list[str]:
    return list(EVENTS)


@server.tool()
def printer(text: str) -> str:
    print("this goes to stderr, not the protocol stream:", text)
    sys.stdout.write("and so does this\n")
    sys.stdout.flush()
    return "printed"


@server.tool()
async def who(ctx: Context) -> dict[str, object]:
    await ctx.info("who was called", logger="everything")
    return {
        "client": (ctx.client_info or {}).get("name"),
        "request_id_type": type(ctx.request_id).__name__,
        "version": ctx.protocol_version,
    }


@server.tool()
async def ask_model(prompt: str, ctx: Context) -> str:
    result = await ctx.sample(prompt, max_tokens=20)
    return f"model said: {result['content']['text']}"


@server.tool()
async def ask_user(ctx: Context) -> str:
    answer = await ctx.elicit(
        "Your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    return f"{answer['action']}: {answer.get('content')}"


@server.tool()
async def roots(ctx: Context) -> str:
    result = await ctx.list_roots()
    return ",".join(r["uri"] for r in result["roots"])


@server.tool()
def add_dynamic() -> str:
    def dynamic() -> str:
        return "I was added at runtime"

    server.add_tool(dynamic)
    return "added"


@server.tool()
def remove_dynamic() -> bool:
    return server.remove_tool("dynamic")


@server.tool()
def touch(uri: str) -> str:
    """Tells the clients subscribed to ``uri`` that it changed."""
    server.notify_resource_updated(uri)
    return f"touched {uri}"


@server.resource("test://static", mime_type="text/plain", description="A static text")
def static() -> str:
    return "static text"


@server.resource("test://binary")
def binary() -> bytes:
    return b"\x00\x01\x02"


@server.resource("test://items/{item_id}", description="One item")
async def item(item_id: str) -> str | None:
    if item_id == "missing":
        return None
    return f"item {item_id}"


@server.prompt()
def greeting(name: str, style: str = "plain") -> str:
    """Greets someone.

    Args:
        name: who to greet
        style: how
    """
    return f"Hello {name} ({style})"


@server.prompt()
async def conversation(topic: str) -> list[object]:
    return [f"Tell me about {topic}", {"role": "assistant", "content": "Sure."}]


@server.completion(prompt="greeting", argument="name")
def complete_name(value: str, context: dict[str, str]) -> list[str]:
    return [n for n in ["alice", "albert", "bob"] if n.startswith(value)]


@server.completion(resource="test://items/{item_id}", argument="item_id")
async def complete_item(value: str, context: dict[str, str]) -> list[str]:
    return [f"{value}{i}" for i in range(150)]


async def serve_http() -> None:
    http = await server.serve_http(port=0)
    print(f"listening on {http.url}", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if "--http" in sys.argv:
        asyncio.run(serve_http())
    elif "--ws" in sys.argv:
        server.run("ws", port=0)
    else:
        server.run()
