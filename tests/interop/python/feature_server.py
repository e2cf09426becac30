"""The whole MCP feature surface served by the official Python SDK (`mcp` 2.x), on stdio.

core/tests/interop starts this script and drives it with oxmcp's
client, in the stateless revision (2026-07-28) and in the handshake era. It serves:

- resources: a text one, a binary one (a PNG, sent as a base64 blob), one clients may
  subscribe to, and a template `test://template/{id}/data`;
- prompts: one without arguments, one with a required and an optional argument, one that
  embeds a resource and one with an image;
- completion of the `greeting` prompt's `name` and of the template's `id`;
- `resources/subscribe` / `resources/unsubscribe` (handshake era) and the `touch` tool,
  which sends `notifications/resources/updated` to subscribers (and to
  `subscriptions/listen` streams in 2026-07-28);
- `logging/setLevel` and the `log_messages` tool, which logs at four levels;
- tools that ask the client: `ask_model` (sampling), `ask_user` (form elicitation),
  `list_client_roots` (roots) and `ask_everything` (all three at once), all through the
  SDK's `Resolve(...)` markers, which send a server-to-client request in the handshake
  era and return an `InputRequiredResult` in 2026-07-28; and `ask_with_defaults`, a
  hand-written multi round-trip tool that echoes the elicitation answer exactly as it
  came over the wire (SEP-1034 defaults are the client's job, so the server must not
  fill them in).

Every tool result echoes what the client answered, so the Rust test can assert it.
"""

import base64
import json
import warnings
from importlib.metadata import version
from typing import Annotated, Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import (
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
    UserMessage,
)
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import (
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequiredResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

# Logging, sampling and roots are deprecated as of 2026-07-28 (SEP-2577) but still served:
# keep the warnings off stderr, where the Rust test looks for crashes.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

# A 1x1 red PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
TEMPLATE = "test://template/{id}/data"
LEVELS = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
]

server = MCPServer(
    "python-features",
    version=f"mcp-{version('mcp')}",
    instructions="Feature server for oxmcp interop.",
)

# --- Resources ------------------------------------------------------------------------------


@server.resource(
    "test://static-text",
    name="static-text",
    description="A static text resource",
    mime_type="text/plain",
)
def static_text() -> str:
    return "Static text from the Python SDK."


@server.resource(
    "test://static-binary",
    name="static-binary",
    description="A static binary resource (a PNG)",
    mime_type="image/png",
)
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@server.resource(
    "test://watched",
    name="watched",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
)
def watched() -> str:
    return "Watched resource content."


@server.resource(
    TEMPLATE,
    name="template",
    description="A templated resource",
    mime_type="application/json",
)
def template(id: str) -> str:
    return json.dumps({"id": id, "source": "python"})


# Handshake-era subscriptions: one client per process, so a module-level set will do.
SUBSCRIBED: set[str] = set()


async def subscribe(
    _ctx: ServerRequestContext[Any], params: SubscribeRequestParams
) -> EmptyResult:
    SUBSCRIBED.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(
    _ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams
) -> EmptyResult:
    SUBSCRIBED.discard(str(params.uri))
    return EmptyResult()


@server.tool(structured_output=False)
async def touch(uri: str, ctx: Context) -> str:
    """Marks a resource as changed and tells whoever subscribed to it."""
    sent = 0
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        # 2026-07-28: subscriptions/listen streams that asked for this URI.
        await ctx.notify_resource_updated(uri)
    elif uri in SUBSCRIBED:
        await ctx.session.send_resource_updated(uri)
        sent = 1
    return f"touched {uri}, {sent} subscription notice(s) sent"


# --- Logging --------------------------------------------------------------------------------

# The level the client asked for with logging/setLevel (handshake era). Filtering is the
# application's job there; in 2026-07-28 the SDK filters by the request's `_meta` level.
LOG_LEVEL: dict[str, str] = {}


async def set_level(
    _ctx: ServerRequestContext[Any], params: SetLevelRequestParams
) -> EmptyResult:
    LOG_LEVEL["level"] = params.level
    return EmptyResult()


@server.tool(structured_output=False)
async def log_messages(ctx: Context) -> str:
    """Logs one message at each of debug, info, warning and error."""
    floor = LEVELS.index(LOG_LEVEL.get("level", "debug"))
    for level in ["debug", "info", "warning", "error"]:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern or LEVELS.index(level) >= floor:
            await ctx.log(level, f"{level} message", logger_name="python-features")
    return f"logged (setLevel: {LOG_LEVEL.get('level', 'none')})"


# Registered on the low-level server: MCPServer has no decorator for these. A registered
# `resources/subscribe` turns on `resources.subscribe`, `logging/setLevel` the `logging`
# capability.
lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
lowlevel.add_request_handler(
    "resources/unsubscribe", UnsubscribeRequestParams, unsubscribe
)
lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)

# --- Prompts --------------------------------------------------------------------------------


@server.prompt(description="A prompt without arguments")
def simple_prompt() -> str:
    return "A simple prompt from the Python SDK."


@server.prompt(description="A greeting with a required name and an optional style")
def greeting(name: str, style: str = "friendly") -> str:
    return f"Write a {style} greeting for {name}."


@server.prompt(description="A prompt that embeds a resource")
def embedded_resource(resourceUri: str) -> list[UserMessage]:
    resource = TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource text."
    )
    return [
        UserMessage(EmbeddedResource(type="resource", resource=resource)),
        UserMessage("Please summarise the resource above."),
    ]


@server.prompt(description="A prompt with an image")
def image_prompt() -> list[UserMessage]:
    return [
        UserMessage(ImageContent(type="image", data=PNG, mime_type="image/png")),
        UserMessage("Describe the image above."),
    ]


# --- Completion -----------------------------------------------------------------------------

NAMES = ["Ada", "Alan", "Alonzo", "Grace"]
IDS = ["1", "2", "3", "42", "123"]


@server.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    if isinstance(ref, PromptReference):
        if ref.name != "greeting":
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {ref.name}")
        if argument.name != "name":
            return None
        values = [n for n in NAMES if n.lower().startswith(argument.value.lower())]
        return Completion(values=values, total=len(values), has_more=False)
    if ref.uri != TEMPLATE:
        raise MCPError(
            code=INVALID_PARAMS, message=f"Unknown resource template: {ref.uri}"
        )
    values = [i for i in IDS if i.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


# --- Tools that ask the client --------------------------------------------------------------


def sample_question(prompt: str) -> Sample:
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=prompt)
    )
    return Sample([message], max_tokens=64, system_prompt="Answer briefly.")


@server.tool(structured_output=False)
async def ask_model(
    prompt: str, answer: Annotated[CreateMessageResult, Resolve(sample_question)]
) -> str:
    """Asks the client's model (sampling/createMessage) and echoes its answer."""
    content = answer.content
    text = content.text if isinstance(content, TextContent) else repr(content)
    return f"model {answer.model} said {text!r} (stopReason {answer.stop_reason})"


class Contact(BaseModel):
    """What `ask_user` asks for."""

    username: str
    email: str


def contact_question(message: str) -> Elicit[Contact]:
    return Elicit(message, Contact)


@server.tool(structured_output=False)
async def ask_user(
    message: str,
    answer: Annotated[ElicitationResult[Contact], Resolve(contact_question)],
) -> str:
    """Asks the user (elicitation/create, form mode) and echoes the answer."""
    if answer.action == "accept":
        return f"accept: {answer.data.model_dump_json()}"
    return answer.action


def roots_question() -> ListRoots:
    return ListRoots()


@server.tool(structured_output=False)
async def list_client_roots(
    roots: Annotated[ListRootsResult, Resolve(roots_question)],
) -> str:
    """Asks the client for its roots (roots/list) and echoes them."""
    listed = [{"uri": str(r.uri), "name": r.name} for r in roots.roots]
    return json.dumps(listed)


@server.tool(structured_output=False)
async def ask_everything(
    prompt: str,
    message: str,
    answer: Annotated[CreateMessageResult, Resolve(sample_question)],
    contact: Annotated[ElicitationResult[Contact], Resolve(contact_question)],
    roots: Annotated[ListRootsResult, Resolve(roots_question)],
) -> str:
    """Asks three questions at once: one round with three input requests in 2026-07-28."""
    said = answer.content.text if isinstance(answer.content, TextContent) else "?"
    user = contact.data.username if contact.action == "accept" else contact.action
    return f"model said {said!r}; user {user}; {len(roots.roots)} root(s)"


# SEP-1034: a default for each primitive type.
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}
DEFAULTS_MESSAGE = "Review the defaults"


def describe(result: ElicitResult, rounds: str) -> str:
    content = json.dumps(result.content, separators=(",", ":"))
    return f"{rounds}: action={result.action}, content={content}"


@server.tool(structured_output=False)
async def ask_with_defaults(ctx: Context) -> str | InputRequiredResult:
    """Elicits a form whose fields all have defaults; echoes the raw answer."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        result = await ctx.session.elicit_form(
            DEFAULTS_MESSAGE, DEFAULTS_SCHEMA, related_request_id=ctx.request_id
        )
        return describe(result, "request")
    # 2026-07-28, by hand: ask on the first round, read the answer on the retry.
    answers = ctx.input_responses
    if not answers:
        params = ElicitRequestFormParams(
            message=DEFAULTS_MESSAGE, requested_schema=DEFAULTS_SCHEMA
        )
        return InputRequiredResult(
            input_requests={"prefs": ElicitRequest(params=params)},
            request_state="round-1",
        )
    answer = answers.get("prefs")
    if not isinstance(answer, ElicitResult):
        return f"unexpected answer: {answer!r}"
    return describe(answer, f"retry after {ctx.request_state}")


if __name__ == "__main__":
    server.run()
