"""Drives oxmcp's conformance server with the official Python SDK client, feature by feature.

Usage: feature_client.py MODE SERVER_COMMAND [ARG...]

MODE is the SDK client's connect mode: "auto" (which must reach the stateless 2026-07-28
revision, where the server asks for input with InputRequiredResult and the client retries)
or "legacy" (the 2025-11-25 handshake, where the server sends requests). The server is
examples/rust/conformance_server.rs; the expected texts are those of
examples/rust/conformance/fixture.rs. Covered: resources (list, text, blob), the resource
template (list, read through it), subscriptions (resources/subscribe in the handshake era,
subscriptions/listen in 2026-07-28), prompts (list, arguments, embedded resource, image),
completion (a prompt argument, a template variable), logging (logging/setLevel, or the
per-request `_meta` level), sampling and elicitation (including SEP-1034 defaults, which
the client fills in), each with a bad-input neighbour. Roots are not covered: the fixture
has no tool that asks the client for them.

The script checks everything it receives and exits non-zero with a MISMATCH line on
stderr at the first difference; core/tests/interop runs it.
"""

import json
import sys
import warnings
from importlib.metadata import version
from typing import Any

import anyio
import anyio.lowlevel
from checks import (
    PINNED_SDK,
    Mismatch,
    expect,
    expect_eq,
    ok,
    only_text,
    run_checks,
)
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    LOG_LEVEL_META_KEY,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    Implementation,
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
)

# Resources, logging/setLevel and sampling are deprecated in 2026-07-28 but still exercised.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}

# From examples/rust/conformance/fixture.rs.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
RESOURCES = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A static text resource",
        "mimeType": "text/plain",
    },
    {
        "uri": "test://static-binary",
        "name": "static-binary",
        "description": "A static binary resource (a PNG)",
        "mimeType": "image/png",
    },
    {
        "uri": "test://watched-resource",
        "name": "watched-resource",
        "description": "A resource clients can subscribe to",
        "mimeType": "text/plain",
    },
]
TEMPLATE = "test://template/{id}/data"
PROMPTS = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two required arguments",
        "arguments": [
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt that embeds a resource",
        "arguments": [
            {
                "name": "resourceUri",
                "description": "URI of the resource to embed",
                "required": True,
            }
        ],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    {
        "name": "test_input_required_result_prompt",
        "description": "A prompt that asks for context first",
    },
]
LOG_LINES = [
    {"level": "info", "logger": "conformance", "data": "Tool execution started"},
    {"level": "info", "logger": "conformance", "data": "Tool processing data"},
    {"level": "info", "logger": "conformance", "data": "Tool execution completed"},
]
DEFAULTS_MESSAGE = "Please review and update the form fields with defaults"
DEFAULTS_PROPERTIES = {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {
        "type": "string",
        "description": "User status",
        "enum": ["active", "inactive", "pending"],
        "default": "active",
    },
    "verified": {
        "type": "boolean",
        "description": "Verification status",
        "default": True,
    },
}
CONTACT_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


def wire(model: Any) -> Any:
    """A model as it was on the wire (the revision's extra members left out)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def expect_error(call: Any, code: int, message: str, what: str) -> MCPError:
    try:
        await call
    except MCPError as e:
        expect_eq((e.code, e.message), (code, message), f"{what}: error")
        return e
    raise Mismatch(f"{what}: succeeded")


class Host:
    """The client application: what its callbacks were asked and how they answer."""

    def __init__(self, modern: bool) -> None:
        self.modern = modern
        self.asked: list[tuple[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.refuse_sampling = False

    def check_channel(self, ctx: ClientRequestContext, kind: str) -> None:
        # 2026-07-28: the question came inside an InputRequiredResult, under the key the
        # server gave it; in the handshake era as a JSON-RPC request with a numeric id.
        if self.modern:
            expect_eq(ctx.request_id, f"{kind}-0", f"{kind}: input request key")
        else:
            expect(
                isinstance(ctx.request_id, int),
                f"{kind}: request id {ctx.request_id!r}",
            )

    async def sampling(
        self, ctx: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        self.check_channel(ctx, "sampling")
        self.asked.append(("sampling", wire(params)))
        if self.refuse_sampling:
            return ErrorData(code=-1, message="User rejected sampling")
        content = params.messages[0].content
        text = content.text if isinstance(content, TextContent) else repr(content)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=f"echo: {text}"),
            model="python-sdk-model",
            stop_reason="endTurn",
        )

    async def elicitation(
        self, ctx: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        self.check_channel(ctx, "elicitation")
        self.asked.append(("elicitation", wire(params)))
        if not isinstance(params, ElicitRequestFormParams):
            return ErrorData(code=-32602, message="only form elicitation is expected")
        if params.message.startswith("decline"):
            return ElicitResult(action="decline")
        if params.message.startswith("sloppy"):
            return ElicitResult(
                action="accept", content={"username": 42, "email": ["a"]}
            )
        if params.message == DEFAULTS_MESSAGE:
            # SEP-1034: the user changed one field; the client fills in every default.
            content: dict[str, Any] = {"name": "Ada"}
            for name, schema in params.requested_schema["properties"].items():
                if "default" in schema:
                    content.setdefault(name, schema["default"])
            return ElicitResult(action="accept", content=content)
        return ElicitResult(
            action="accept", content={"username": "ada", "email": "ada@example.com"}
        )

    async def logging(self, params: LoggingMessageNotificationParams) -> None:
        self.logs.append(wire(params))

    async def wait_for_logs(self, count: int) -> list[dict[str, Any]]:
        # The SDK hands notifications to callbacks from tasks of their own, so they may
        # trail the tool's result a little. A guard against a hang, not a timed assertion.
        with anyio.fail_after(10):
            while len(self.logs) < count:
                await anyio.sleep(0.01)
        logs, self.logs = self.logs, []
        return logs

    async def expect_no_logs(self, client: Client, what: str) -> None:
        # Another round trip, then let spawned callback tasks run: nothing may have arrived.
        await client.list_tools(cache_mode="bypass")
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        expect_eq(self.logs, [], what)


async def check_resources(client: Client, modern: bool) -> None:
    listed = await client.list_resources()
    expect_eq([wire(r) for r in listed.resources], RESOURCES, "resources/list")
    expect_eq(listed.next_cursor, None, "resources/list nextCursor")

    text = await client.read_resource("test://static-text")
    expect_eq(
        [wire(c) for c in text.contents],
        [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ],
        "read test://static-text",
    )
    blob = await client.read_resource("test://static-binary")
    expect_eq(
        [wire(c) for c in blob.contents],
        [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}],
        "read test://static-binary",
    )
    ok("resources: list, text, blob")

    templates = await client.list_resource_templates()
    expect_eq(
        [wire(t) for t in templates.resource_templates],
        [
            {
                "uriTemplate": TEMPLATE,
                "name": "template",
                "description": "A templated resource",
                "mimeType": "application/json",
            }
        ],
        "resources/templates/list",
    )
    item = await client.read_resource("test://template/42/data")
    expect_eq(len(item.contents), 1, "template read: number of contents")
    contents = wire(item.contents[0])
    expect_eq(
        (contents["uri"], contents["mimeType"]),
        ("test://template/42/data", "application/json"),
        "template read: uri and mimeType",
    )
    expect_eq(
        json.loads(contents["text"]),
        {"id": "42", "templateTest": True, "data": "Data for ID: 42"},
        "template read: text",
    )
    ok("resource template: list, read through it")

    # An unknown resource: -32002 in the handshake era, -32602 in 2026-07-28.
    code = -32602 if modern else -32002
    e = await expect_error(
        client.read_resource("test://nope", cache_mode="bypass"),
        code,
        "Resource not found: test://nope",
        "unknown resource",
    )
    expect_eq(e.error.data, {"uri": "test://nope"}, "unknown resource: data")
    # A URI the template does not match is just as unknown.
    await expect_error(
        client.read_resource("test://template/42", cache_mode="bypass"),
        code,
        "Resource not found: test://template/42",
        "a URI the template does not match",
    )
    ok(f"unknown resource is JSON-RPC {code}")


async def check_subscriptions(client: Client, modern: bool) -> None:
    expect(
        client.server_capabilities.resources.subscribe is True, "resources.subscribe"
    )
    if modern:
        # 2026-07-28 has no resources/subscribe: a listen stream, acknowledged as asked.
        async with client.listen(
            resource_subscriptions=["test://watched-resource"]
        ) as sub:
            expect_eq(
                wire(sub.honored),
                {"resourceSubscriptions": ["test://watched-resource"]},
                "subscriptions/listen acknowledgement",
            )
        ok("subscriptions/listen acknowledged")
        # The handshake-era methods do not exist in 2026-07-28.
        for call, method in [
            (
                client.subscribe_resource("test://watched-resource"),
                "resources/subscribe",
            ),
            (client.set_logging_level("info"), "logging/setLevel"),
        ]:
            await expect_error(
                call,
                -32601,
                f"Method not found: `{method}` does not exist in protocol version 2026-07-28",
                f"{method} in 2026-07-28",
            )
        ok("resources/subscribe and logging/setLevel are JSON-RPC -32601 in 2026-07-28")
    else:
        result = await client.subscribe_resource("test://watched-resource")
        expect_eq(wire(result), {}, "resources/subscribe result")
        result = await client.unsubscribe_resource("test://watched-resource")
        expect_eq(wire(result), {}, "resources/unsubscribe result")
        ok("resources/subscribe and unsubscribe")


async def check_prompts(client: Client) -> None:
    listed = await client.list_prompts()
    expect_eq([wire(p) for p in listed.prompts], PROMPTS, "prompts/list")

    simple = await client.get_prompt("test_simple_prompt")
    expect_eq(
        [wire(m) for m in simple.messages],
        [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "This is a simple prompt for testing.",
                },
            }
        ],
        "test_simple_prompt",
    )
    with_args = await client.get_prompt(
        "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
    )
    expect_eq(
        [wire(m) for m in with_args.messages],
        [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Prompt with arguments: arg1='a', arg2='b'",
                },
            }
        ],
        "test_prompt_with_arguments",
    )
    embedded = await client.get_prompt(
        "test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"}
    )
    expect_eq(
        [wire(m) for m in embedded.messages],
        [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {
                        "uri": "test://static-text",
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    },
                },
            },
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Please process the embedded resource above.",
                },
            },
        ],
        "test_prompt_with_embedded_resource",
    )
    image = await client.get_prompt("test_prompt_with_image")
    expect_eq(
        [wire(m) for m in image.messages],
        [
            {
                "role": "user",
                "content": {"type": "image", "data": PNG, "mimeType": "image/png"},
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please analyze the image above."},
            },
        ],
        "test_prompt_with_image",
    )
    ok("prompts: list, arguments, embedded resource, image")

    await expect_error(
        client.get_prompt("test_prompt_with_arguments", {"arg1": "a"}),
        -32602,
        "Missing required argument(s) for prompt `test_prompt_with_arguments`: arg2",
        "missing prompt argument",
    )
    await expect_error(
        client.get_prompt("nope"), -32602, "Unknown prompt: nope", "unknown prompt"
    )
    ok("missing argument and unknown prompt are JSON-RPC -32602")


async def check_completion(client: Client) -> None:
    expect(client.server_capabilities.completions is not None, "completions capability")
    ref = PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    words = await client.complete(ref, {"name": "arg1", "value": "pa"})
    expect_eq(
        wire(words.completion),
        {"values": ["paris", "park", "party"], "total": 3, "hasMore": False},
        "complete arg1",
    )
    template = ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
    ids = await client.complete(template, {"name": "id", "value": "4"}, {"other": "x"})
    expect_eq(
        wire(ids.completion),
        {"values": ["42"], "total": 1, "hasMore": False},
        "complete id",
    )
    # An argument without a completer: an empty completion.
    none = await client.complete(ref, {"name": "arg2", "value": "pa"})
    expect_eq(
        wire(none.completion),
        {"values": [], "total": 0, "hasMore": False},
        "complete arg2",
    )
    ok("completion: prompt argument, template variable")

    await expect_error(
        client.complete(
            PromptReference(type="ref/prompt", name="nope"), {"name": "a", "value": ""}
        ),
        -32602,
        "Unknown prompt: nope",
        "completion for an unknown prompt",
    )
    await expect_error(
        client.complete(
            ResourceTemplateReference(type="ref/resource", uri="test://other/{id}"),
            {"name": "id", "value": ""},
        ),
        -32602,
        "Unknown resource template: test://other/{id}",
        "completion for an unknown template",
    )
    ok("completion for unknown references is JSON-RPC -32602")


async def check_logging(client: Client, host: Host, modern: bool) -> None:
    if modern:
        # The client's log_level ("info") rides every request's _meta.
        result = await client.call_tool("test_tool_with_logging", {})
        expect_eq(
            only_text(result, "logging"),
            "Tool with logging executed successfully",
            "logging",
        )
        expect_eq(await host.wait_for_logs(3), LOG_LINES, "log messages at info")
        # One request asking for warning and above: none of the three info lines.
        await client.call_tool(
            "test_tool_with_logging", {}, meta={LOG_LEVEL_META_KEY: "warning"}
        )
        await host.expect_no_logs(client, "log messages at warning")
        ok("logging: per-request _meta level")
    else:
        await client.set_logging_level("info")
        await client.call_tool("test_tool_with_logging", {})
        expect_eq(await host.wait_for_logs(3), LOG_LINES, "log messages at info")
        await client.set_logging_level("warning")
        await client.call_tool("test_tool_with_logging", {})
        await host.expect_no_logs(client, "log messages at warning")
        ok("logging: logging/setLevel")


async def check_sampling(client: Client, host: Host, modern: bool) -> None:
    result = await client.call_tool("test_sampling", {"prompt": "What is 2+2?"})
    expect(not result.is_error, f"test_sampling failed: {result!r}")
    expect_eq(
        only_text(result, "test_sampling"),
        "LLM response: echo: What is 2+2?",
        "sampling",
    )
    expect_eq(
        host.asked,
        [
            (
                "sampling",
                {
                    "messages": [
                        {
                            "role": "user",
                            "content": {"type": "text", "text": "What is 2+2?"},
                        }
                    ],
                    "maxTokens": 100,
                },
            )
        ],
        "sampling request",
    )
    host.asked.clear()
    ok("sampling")

    # The host refuses: the handshake-era server's tool fails with the refusal; in
    # 2026-07-28 the client cannot answer the round and the SDK raises the refusal itself.
    host.refuse_sampling = True
    if modern:
        await expect_error(
            client.call_tool("test_sampling", {"prompt": "x"}),
            -1,
            "User rejected sampling",
            "refused sampling",
        )
    else:
        result = await client.call_tool("test_sampling", {"prompt": "x"})
        text = only_text(result, "refused sampling")
        expect(
            result.is_error and "User rejected sampling" in text,
            f"refused sampling: {text!r}",
        )
    host.refuse_sampling = False
    host.asked.clear()
    ok("refused sampling")


async def check_elicitation(client: Client, host: Host) -> None:
    result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    expect_eq(
        only_text(result, "test_elicitation"),
        'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
        "elicitation accepted",
    )
    expect_eq(
        host.asked,
        [
            (
                "elicitation",
                {
                    "mode": "form",
                    "message": "Who are you?",
                    "requestedSchema": CONTACT_SCHEMA,
                },
            )
        ],
        "elicitation request",
    )
    result = await client.call_tool("test_elicitation", {"message": "decline, please"})
    expect_eq(
        only_text(result, "declined"),
        "User response: action=decline, content={}",
        "elicitation declined",
    )
    ok("elicitation: accept, decline")

    host.asked.clear()
    result = await client.call_tool("test_elicitation_sep1034_defaults", {})
    expect_eq(
        only_text(result, "sep1034"),
        'Elicitation completed: action=accept, content={"name":"Ada","age":30,"score":95.5,'
        '"status":"active","verified":true}',
        "SEP-1034 defaults",
    )
    (kind, params) = host.asked[0]
    expect_eq(
        (kind, params["message"], params["requestedSchema"]["properties"]),
        ("elicitation", DEFAULTS_MESSAGE, DEFAULTS_PROPERTIES),
        "SEP-1034 request",
    )
    host.asked.clear()
    ok("elicitation: SEP-1034 defaults filled by the client")

    # An answer that breaks the requested schema never reaches the tool.
    result = await client.call_tool("test_elicitation", {"message": "sloppy"})
    text = only_text(result, "sloppy answer")
    expect(
        result.is_error and "does not match the requested schema" in text,
        f"sloppy answer: {text!r}",
    )
    host.asked.clear()
    ok("an elicitation answer that breaks the schema is a tool error")


async def check_missing_capability(params: StdioServerParameters, mode: str) -> None:
    """A client with no sampling callback declares no sampling capability."""
    info = Implementation(name="python-interop-bare-client", version=PINNED_SDK)
    async with Client(params, mode=mode, client_info=info) as client:
        if mode == "legacy":
            result = await client.call_tool("test_missing_capability", {})
            expect_eq(
                (result.is_error, only_text(result, "missing capability")),
                (
                    True,
                    "invalid argument: the client did not declare the `sampling` capability",
                ),
                "missing capability",
            )
        else:
            e = await expect_error(
                client.call_tool("test_missing_capability", {}),
                -32021,
                "This request needs the client capability `sampling`",
                "missing capability",
            )
            expect_eq(
                e.error.data,
                {"requiredCapabilities": {"sampling": {}}},
                "missing capability data",
            )
    ok("a client without the sampling capability")


async def run(mode: str, command: list[str]) -> None:
    expect_eq(version("mcp"), PINNED_SDK, "installed mcp version")
    modern = mode != "legacy"
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={"RUST_LOG": "warn"}
    )
    host = Host(modern)
    info = Implementation(name="python-interop-feature-client", version=PINNED_SDK)
    async with Client(
        params,
        mode=mode,
        client_info=info,
        sampling_callback=host.sampling,
        elicitation_callback=host.elicitation,
        logging_callback=host.logging,
        log_level="info",
    ) as client:
        expect_eq(
            client.protocol_version,
            EXPECTED_VERSION[mode],
            "negotiated protocol version",
        )
        expect(client.server_info is not None, "serverInfo missing")
        expect_eq(client.server_info.name, "oxmcp-conformance", "serverInfo.name")
        ok(f"connected in mode {mode!r} on {client.protocol_version}")

        await check_resources(client, modern)
        await check_subscriptions(client, modern)
        await check_prompts(client)
        await check_completion(client)
        await check_logging(client, host, modern)
        await check_sampling(client, host, modern)
        await check_elicitation(client, host)
        expect_eq(host.asked, [], "unexpected questions")
    await check_missing_capability(params, mode)


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in EXPECTED_VERSION:
        print(
            f"usage: {sys.argv[0]} auto|legacy SERVER_COMMAND [ARG...]", file=sys.stderr
        )
        return 2
    return run_checks(run, sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
