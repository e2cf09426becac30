"""MCP tools as langchain-core tools (``pip install oxmcp[langchain]``).

>>> async with Host.from_config("mcp.json") as host:
...     tools = await oxmcp.langchain.load_tools(host)
...     model = ChatOpenAI(...).bind_tools(tools)

What the usual adapters get wrong, and what happens here instead:

- Every call goes over the server's one long-lived session (the host's or the client's),
  never a new session per call.
- ``outputSchema`` is kept (``metadata["output_schema"]``) and results come back as content
  *and* artifact: the model reads the content, the program gets ``structuredContent`` and
  the whole ``CallToolResult`` in ``ToolMessage.artifact``.
- Arguments reach the server under their own names, including ``config``, ``run_manager``
  and ``callbacks``, which langchain-core would otherwise take for its own: the tool's
  ``_arun`` takes only ``**kwargs`` and no ``RunnableConfig`` annotation, so langchain-core
  injects nothing into it and removes nothing from it.

The tool shape (names, ``args_schema``, metadata) and the result mapping are the core's
LangChain translation; this module only wraps them in ``BaseTool``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

try:
    from langchain_core.tools import BaseTool, ToolException
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("oxmcp.langchain needs langchain-core: pip install 'oxmcp[langchain]'") from e

from pydantic import ConfigDict

from .translate import Namespace, Translation, to_langchain, tool_results

if TYPE_CHECKING:
    from .client import Client
    from .host import Host
    from .types import CallToolResult

__all__ = ["McpTool", "load_tools"]


class McpTool(BaseTool):
    """One MCP tool on a live session. Built by :func:`load_tools`."""

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True
    server: str | None = None
    """The server it lives on (for a host's tools)."""
    mcp_name: str
    """The tool's name on its server."""
    session: Any = None
    """The ``Host`` or ``Client`` the calls go through."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("MCP tools are async: use `await tool.ainvoke(...)`")

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        # Only keyword arguments exist here: a dict args_schema makes langchain-core pass the
        # model's arguments through as they are (see the module doc).
        if args:
            raise ToolException(f"{self.name} takes keyword arguments only")
        result = await self._call(kwargs)
        (message,) = tool_results("langchain", [({"id": None, "name": self.name}, result)])
        if message.get("status") == "error":
            raise ToolException(_text(message.get("content")))
        artifact = dict(message.get("artifact") or {})
        artifact["result"] = result
        return message.get("content", ""), artifact

    async def _call(self, arguments: dict[str, Any]) -> CallToolResult:
        from .client import Client
        from .host import Host

        if isinstance(self.session, Host):
            assert self.server is not None
            return await self.session.call_tool(self.server, self.mcp_name, arguments)
        if isinstance(self.session, Client):
            return await self.session.call_tool(self.mcp_name, arguments)
        raise ToolException(f"{self.name}: no MCP session")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def _tools(translation: Translation, session: Any) -> list[McpTool]:
    out = []
    for spec in translation.tools:
        target = translation.names[spec["name"]]
        out.append(
            McpTool(
                name=spec["name"],
                description=spec.get("description") or "",
                args_schema=spec["args_schema"],
                metadata=spec.get("metadata"),
                server=target["server"] or None,
                mcp_name=target["tool"],
                session=session,
            )
        )
    return out


async def load_tools(session: Host | Client, *, namespace: Namespace = "always") -> list[McpTool]:
    """The tools of a :class:`oxmcp.Host` (every connected server, names ``server__tool`` as
    ``namespace`` says) or of one :class:`oxmcp.Client` (names as the server gives them, only
    sanitised), each calling over that session."""
    from .host import Host

    if isinstance(session, Host):
        translation = await session.translate("langchain", namespace=namespace)
    else:
        tools: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:  # every page; a server repeating a cursor ends the listing
            page = await session.list_tools(cursor)
            tools.extend(page["tools"])
            cursor = page.get("nextCursor")
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
        translation = to_langchain(tools)
    return _tools(translation, session)
