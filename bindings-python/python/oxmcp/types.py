"""TypedDicts for the wire's results: what the client's methods return and what handlers may
return. Results are plain dicts with the wire's keys; these types only describe them."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from typing_extensions import NotRequired

__all__ = [
    "AccessClaims",
    "ContentBlock",
    "Tool",
    "ListToolsResult",
    "CallToolResult",
    "Resource",
    "ResourceTemplate",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ResourceContents",
    "ReadResourceResult",
    "Prompt",
    "PromptMessage",
    "ListPromptsResult",
    "GetPromptResult",
    "Completion",
    "CompleteResult",
    "CreateMessageResult",
    "ElicitResult",
    "Root",
    "ListRootsResult",
    "ServerDetails",
]


class ContentBlock(TypedDict, total=False):
    type: str
    text: str
    data: str
    mimeType: str
    resource: dict[str, Any]
    uri: str
    name: str
    annotations: dict[str, Any]
    _meta: dict[str, Any]


class Tool(TypedDict):
    name: str
    inputSchema: dict[str, Any]
    title: NotRequired[str]
    description: NotRequired[str]
    outputSchema: NotRequired[dict[str, Any]]
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class ListToolsResult(TypedDict):
    tools: list[Tool]
    nextCursor: NotRequired[str]


class CallToolResult(TypedDict):
    content: list[ContentBlock]
    structuredContent: NotRequired[dict[str, Any]]
    isError: NotRequired[bool]
    _meta: NotRequired[dict[str, Any]]


TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""Where a task is: ``completed``, ``failed`` and ``cancelled`` are final."""


class Task(TypedDict):
    """A task as the server describes it (``tasks/get``). The durations are milliseconds:
    ``ttl``/``pollInterval`` in 2025-11-25, ``ttlMs``/``pollIntervalMs`` in 2026-07-28 (read
    whichever is present); a 2026-07-28 task inlines its ``result``, ``error`` or open
    ``inputRequests``."""

    taskId: str
    status: TaskStatus
    statusMessage: NotRequired[str]
    createdAt: str
    lastUpdatedAt: NotRequired[str]
    ttl: NotRequired[int | None]
    pollInterval: NotRequired[int]
    ttlMs: NotRequired[int | None]
    pollIntervalMs: NotRequired[int]
    inputRequests: NotRequired[dict[str, Any]]
    result: NotRequired[CallToolResult]
    error: NotRequired[dict[str, Any]]


class Resource(TypedDict):
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]


class ResourceTemplate(TypedDict):
    uriTemplate: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]


class ListResourcesResult(TypedDict):
    resources: list[Resource]
    nextCursor: NotRequired[str]


class ListResourceTemplatesResult(TypedDict):
    resourceTemplates: list[ResourceTemplate]
    nextCursor: NotRequired[str]


class ResourceContents(TypedDict):
    uri: str
    mimeType: NotRequired[str]
    text: NotRequired[str]
    blob: NotRequired[str]


class ReadResourceResult(TypedDict):
    contents: list[ResourceContents]


class Prompt(TypedDict):
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    arguments: NotRequired[list[dict[str, Any]]]


class PromptMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class ListPromptsResult(TypedDict):
    prompts: list[Prompt]
    nextCursor: NotRequired[str]


class GetPromptResult(TypedDict):
    messages: list[PromptMessage]
    description: NotRequired[str]


class Completion(TypedDict):
    values: list[str]
    total: NotRequired[int]
    hasMore: NotRequired[bool]


class CompleteResult(TypedDict):
    completion: Completion


class CreateMessageResult(TypedDict):
    role: Literal["user", "assistant"]
    content: Any
    model: str
    stopReason: NotRequired[str]


class ElicitResult(TypedDict):
    action: Literal["accept", "decline", "cancel"]
    content: NotRequired[dict[str, Any]]


class Root(TypedDict):
    uri: str
    name: NotRequired[str]


class ListRootsResult(TypedDict):
    roots: list[Root]


class ServerDetails(TypedDict):
    protocolVersion: str
    serverInfo: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None


class AccessClaims(TypedDict, total=False):
    """What a ``serve_http(auth=...)`` verifier says about a bearer token. ``scopes`` may be
    a list or one space-separated string; ``audience`` must name the server's resource URL;
    ``expires_at`` is seconds since the Unix epoch."""

    subject: str
    client_id: str
    scopes: list[str] | str
    audience: list[str] | str
    expires_at: int
