"""The conformance fixture on the Python binding: exactly the tools, resources and prompts of
examples/rust/conformance/fixture.rs (names, arguments and outputs the official suite checks),
the 2026-07-28 multi round-trip tools included.

    python examples/python/conformance_server.py                    stdio
    python examples/python/conformance_server.py --http --port N    Streamable HTTP
        --stateless           serve without sessions
        --store redis://HOST:PORT/   share sessions with other replicas through Redis
        --state-key HEX       the 32-byte request-state key (64 hex digits), shared by replicas
        --json-response       answer POSTs with JSON only
    python examples/python/conformance_server.py --ws --port N      WebSocket (with --http: both)

Over HTTP it prints ``conformance server listening on http://127.0.0.1:PORT/mcp`` on stderr
once it listens; it never writes anything but protocol to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable
from typing import Any

from oxmcp import Context, Server

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def text_resource(uri: str, mime_type: str, text: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": text}}


def form(field: str, kind: str) -> dict[str, Any]:
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def field(result: Any, name: str) -> str:
    value = (result.get("content") or {}).get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def sampled_text(result: Any) -> str:
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return text if isinstance(text, str) else ""


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def completed(result: Any) -> str:
    content = compact(result.get("content") or {})
    return f"Elicitation completed: action={result['action']}, content={content}"


def add_task_tools(server: Server) -> None:
    """The tasks fixture of conformance 0.2.0-alpha.12 (the ``tasks-*`` scenarios), as the
    Rust fixture's (examples/rust/conformance/tasks.rs): names, arguments, texts and task
    support. The same handlers serve 2025-11-25 clients (``params.task``) and 2026-07-28 ones
    (the tasks extension)."""
    from oxmcp import McpError, ToolError

    def task_tool(
        name: str, description: str, schema: dict[str, Any], **task: Any
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            server.add_tool(
                fn,
                name=name,
                description=description,
                input_schema=schema,
                structured_output=False,
                **task,
            )
            return fn

        return register

    @task_tool(
        "greet",
        "Greets someone (never a task)",
        {"type": "object", "properties": {"name": {"type": "string"}}},
    )
    def greet(name: str = "World") -> str:
        return f"Hello, {name}!"

    slow_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
        "required": ["seconds"],
    }

    @task_tool("slow_compute", "Sleeps `seconds` and says so", slow_schema, task="optional")
    async def slow_compute(seconds: float, label: str = "compute") -> str:
        # A cancelled task's coroutine gets CancelledError here, and the task stays cancelled.
        await asyncio.sleep(min(max(seconds, 0), 600))
        return f"{label}: computed after {seconds:g} s"

    @task_tool(
        "failing_job", "Fails with a tool error after about a second", NO_ARGS, task="required"
    )
    async def failing_job() -> str:
        await asyncio.sleep(1)
        raise ToolError("the job failed (as this fixture always does)")

    @task_tool("protocol_error_job", "Ends in a protocol error", NO_ARGS, task="optional")
    async def protocol_error_job() -> str:
        await asyncio.sleep(0.2)
        raise McpError("Internal error: the job broke (as this fixture always does)", code=-32603)

    filename_schema = {
        "type": "object",
        "properties": {"filename": {"type": "string"}},
        "required": ["filename"],
    }

    @task_tool(
        "confirm_delete",
        "Asks to confirm, then pretends to delete",
        filename_schema,
        task="optional",
    )
    async def confirm_delete(filename: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Delete {filename}?", form("confirm", "boolean"))
        confirmed = (
            answer["action"] == "accept" and (answer.get("content") or {}).get("confirm") is True
        )
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @task_tool("multi_input", "Asks two questions at once", NO_ARGS, task="optional")
    async def multi_input(ctx: Context) -> str:
        name, confirm = await asyncio.gather(
            ctx.elicit("Your name?", form("name", "string")),
            ctx.elicit("Go ahead?", form("confirm", "boolean")),
        )
        given_name = (name.get("content") or {}).get("name")
        go_ahead = (confirm.get("content") or {}).get("confirm")
        return f"name: {compact(given_name)}, confirm: {compact(go_ahead)}"

    @task_tool(
        "test_tool_with_task",
        "Asks for a name within the request, then finishes as a task",
        NO_ARGS,
        task="required",
        task_start="deferred",
    )
    async def tool_with_task(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", form("name", "string"), key="user_name")
        name = (answer.get("content") or {}).get("name") or "stranger"
        await ctx.start_task()
        await asyncio.sleep(0.1)
        return f"Hello, {name}! (from the task)"


def build(state_key: bytes | None = None, scale_out: bool = False) -> Server:
    server = Server("oxmcp-conformance", "0.1.0", state_key=state_key)

    def tool(
        name: str, description: str, schema: dict[str, Any] | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        # Hand-written schemas, as the other fixtures declare them; no output schema.
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            server.add_tool(
                fn,
                name=name,
                description=description,
                input_schema=schema or NO_ARGS,
                structured_output=False,
            )
            return fn

        return register

    # --- tools -------------------------------------------------------------------------------

    @tool("test_simple_text", "Returns a simple text response")
    def simple_text() -> str:
        return "This is a simple text response for testing."

    @tool("test_image_content", "Returns an image (a 1x1 red PNG)")
    def image_content() -> Any:
        return {"type": "image", "data": PNG, "mimeType": "image/png"}

    @tool("test_audio_content", "Returns audio (a short WAV)")
    def audio_content() -> Any:
        return {"type": "audio", "data": WAV, "mimeType": "audio/wav"}

    @tool("test_embedded_resource", "Returns an embedded resource")
    def embedded_resource() -> Any:
        return text_resource(
            "test://embedded-resource", "text/plain", "This is an embedded resource content."
        )

    @tool("test_multiple_content_types", "Returns text, an image and a resource")
    def multiple_content_types() -> Any:
        return [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            text_resource(
                "test://mixed-content-resource", "application/json", '{"test":"data","value":123}'
            ),
        ]

    @tool("test_tool_with_logging", "Sends three log messages while it runs")
    async def tool_with_logging(ctx: Context) -> str:
        messages = ["Tool execution started", "Tool processing data", "Tool execution completed"]
        for i, message in enumerate(messages):
            if i:
                await asyncio.sleep(0.05)
            await ctx.log("info", message, logger="conformance")
        return "Tool with logging executed successfully"

    @tool("test_error_handling", "Always fails")
    def error_handling() -> str:
        from oxmcp import ToolError

        raise ToolError("This tool intentionally returns an error for testing")

    @tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100")
    async def tool_with_progress(ctx: Context) -> str:
        for i, progress in enumerate([0, 50, 100]):
            if i:
                await asyncio.sleep(0.05)
            await ctx.report_progress(progress, 100)
        return "Tool with progress executed successfully"

    @tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"],
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": False,
        },
    )
    def json_schema_2020_12(**args: Any) -> str:
        return f"Received: {compact(args)}"

    @tool(
        "test_custom_header_tool",
        "Tool whose arguments are mirrored into Mcp-Param headers on HTTP (SEP-2243)",
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "note": {"type": "string"},
            },
            "required": ["region"],
        },
    )
    def custom_header(region: str = "", **_rest: Any) -> str:
        return f"Routed to region {region}"

    @tool("test_reconnection", "Cuts its HTTP response stream, then answers on the resumed one")
    async def reconnection(ctx: Context) -> str:
        await ctx.close_stream()
        await asyncio.sleep(0.2)
        return "Reconnection test completed"

    # --- tools that ask the client -----------------------------------------------------------

    @tool(
        "test_sampling",
        "Asks the client's model to answer a prompt",
        {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def sampling(ctx: Context, prompt: str = "") -> str:
        r = await ctx.sample(prompt, max_tokens=100)
        content = r.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        return f"LLM response: {text if isinstance(text, str) else compact(content)}"

    @tool(
        "test_elicitation",
        "Asks the user for a username and email",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    )
    async def elicitation(ctx: Context, message: str = "") -> str:
        r = await ctx.elicit(
            message,
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        return f"User response: action={r['action']}, content={compact(r.get('content') or {})}"

    @tool("test_elicitation_sep1034_defaults", "Elicits with a default for every primitive type")
    async def elicitation_defaults(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {
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
            },
        }
        message = "Please review and update the form fields with defaults"
        return completed(await ctx.elicit(message, schema))

    @tool("test_elicitation_sep1330_enums", "Elicits with all five enum schema forms")
    async def elicitation_enums(ctx: Context) -> str:
        def titled(prefix: str, word: str) -> list[dict[str, str]]:
            ordinals = ["First", "Second", "Third"]
            return [
                {"const": f"{prefix}{i + 1}", "title": f"{o} {word}"}
                for i, o in enumerate(ordinals)
            ]

        options = ["option1", "option2", "option3"]
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Untitled single-select",
                    "enum": options,
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Titled single-select",
                    "oneOf": titled("value", "Option"),
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Legacy titled enum",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Untitled multi-select",
                    "items": {"type": "string", "enum": options},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Titled multi-select",
                    "items": {"anyOf": titled("value", "Choice")},
                },
            },
        }
        return completed(await ctx.elicit("Please select options from the enum fields", schema))

    @tool("test_missing_capability", "Needs the client's sampling capability")
    async def missing_capability(ctx: Context) -> str:
        r = await ctx.sample("ping", max_tokens=10)
        return f"sampled with {r['model']}"

    # --- 2026-07-28 multi round-trip tools (ordinary requests in the handshake era) ----------

    @tool("test_input_required_result_elicitation", "Asks for a name")
    async def irr_elicitation(ctx: Context) -> str:
        r = await ctx.elicit("What is your name?", form("name", "string"), key="user_name")
        return f"Hello, {field(r, 'name')}!"

    @tool("test_input_required_result_sampling", "Asks the model a question")
    async def irr_sampling(ctx: Context) -> str:
        q = "What is the capital of France?"
        r = await ctx.sample(q, max_tokens=100, key="capital_question")
        return f"Model said: {sampled_text(r)}"

    @tool("test_input_required_result_list_roots", "Asks for the client's roots")
    async def irr_list_roots(ctx: Context) -> str:
        r = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(root["uri"] for root in r["roots"])

    async def irr_state(ctx: Context) -> str:
        r = await ctx.elicit("Please confirm", form("ok", "boolean"), key="confirm")
        return f"state-ok: confirmed={field(r, 'ok')}"

    for name in (
        "test_input_required_result_request_state",
        "test_input_required_result_tampered_state",
    ):
        tool(name, "Asks for a confirmation; its state is signed")(irr_state)

    @tool("test_input_required_result_multiple_inputs", "Asks three things at once")
    async def irr_multiple(ctx: Context) -> str:
        name, greeting, roots = await asyncio.gather(
            ctx.elicit("What is your name?", form("name", "string"), key="user_name"),
            ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        return f"{field(name, 'name')} / {sampled_text(greeting)} / {len(roots['roots'])} roots"

    @tool("test_input_required_result_multi_round", "Asks two things, one after the other")
    async def irr_multi_round(ctx: Context) -> str:
        name = await ctx.elicit("Step 1: What is your name?", form("name", "string"), key="step1")
        color = await ctx.elicit(
            "Step 2: What is your favorite color?", form("color", "string"), key="step2"
        )
        return f"{field(name, 'name')} likes {field(color, 'color')}"

    @tool("test_input_required_result_capabilities", "Asks only what the client can answer")
    async def irr_capabilities(ctx: Context) -> str:
        got = []
        if ctx.client_supports("sampling"):
            r = await ctx.sample("Say hi", max_tokens=20, key="sampling_question")
            got.append(f"sampling={sampled_text(r)}")
        if ctx.client_supports("elicitation"):
            e = await ctx.elicit("Your name?", form("name", "string"), key="elicitation_question")
            got.append(f"elicitation={field(e, 'name')}")
        if ctx.client_supports("roots"):
            roots = await ctx.list_roots(key="roots_question")
            got.append(f"roots={len(roots['roots'])}")
        return ", ".join(got) if got else "nothing to ask"

    @tool("test_streaming_elicitation", "Elicits; its answer stream carries no independent request")
    async def streaming_elicitation(ctx: Context) -> str:
        r = await ctx.elicit("Anything to add?", form("note", "string"))
        return f"noted: {field(r, 'note')}"

    @tool("test_logging_tool", "Logs at every level (sent only when the request asks)")
    async def logging_tool(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"{level} message", logger="conformance")
        return "logged"

    if scale_out:

        @tool(
            "scale_out_touch",
            "Marks a resource as updated (its subscribers, on every replica, are told)",
            {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
        )
        def scale_out_touch(uri: str = "") -> str:
            server.notify_resource_updated(uri)
            return f"touched {uri}"

    add_task_tools(server)

    # --- resources -----------------------------------------------------------------------------

    @server.resource(
        "test://static-text",
        name="static-text",
        description="A static text resource",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static binary resource (a PNG)",
        mime_type="image/png",
    )
    def static_binary(uri: str) -> Any:
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        description="A resource clients can subscribe to",
        mime_type="text/plain",
    )
    def watched() -> str:
        return "Watched resource content."

    @server.resource(
        "test://template/{id}/data",
        name="template",
        description="A templated resource",
        mime_type="application/json",
    )
    def template(id: str) -> str:
        return compact({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.completion(resource="test://template/{id}/data", argument="id")
    def complete_id(value: str, context: dict[str, str]) -> list[str]:
        return [i for i in ("1", "2", "3", "42", "123") if i.startswith(value)]

    # --- prompts -------------------------------------------------------------------------------

    def user(content: dict[str, Any]) -> dict[str, Any]:
        return {"role": "user", "content": content}

    @server.prompt("test_simple_prompt", description="A prompt without arguments")
    def simple_prompt() -> Any:
        return [user({"type": "text", "text": "This is a simple prompt for testing."})]

    @server.prompt("test_prompt_with_arguments", description="A prompt with two required arguments")
    def prompt_with_arguments(arg1: str, arg2: str) -> Any:
        """A prompt with two required arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
        return [user({"type": "text", "text": text})]

    @server.completion(prompt="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
        words = ("paris", "park", "party", "hello", "help")
        return [w for w in words if w.startswith(value)]

    @server.prompt(
        "test_prompt_with_embedded_resource", description="A prompt that embeds a resource"
    )
    def prompt_with_embedded_resource(resourceUri: str) -> Any:
        """A prompt that embeds a resource.

        Args:
            resourceUri: URI of the resource to embed
        """
        return [
            user(
                text_resource(resourceUri, "text/plain", "Embedded resource content for testing.")
            ),
            user({"type": "text", "text": "Please process the embedded resource above."}),
        ]

    @server.prompt("test_prompt_with_image", description="A prompt with an image")
    def prompt_with_image() -> Any:
        return [
            user({"type": "image", "data": PNG, "mimeType": "image/png"}),
            user({"type": "text", "text": "Please analyze the image above."}),
        ]

    @server.prompt(
        "test_input_required_result_prompt", description="A prompt that asks for context first"
    )
    async def irr_prompt(ctx: Context) -> Any:
        message = "What context should the prompt use?"
        answer = await ctx.elicit(message, form("context", "string"), key="user_context")
        return [user({"type": "text", "text": f"Use this context: {field(answer, 'context')}"})]

    return server


def parse_key(text: str) -> bytes:
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise SystemExit(f"--state-key needs 64 hex digits (32 bytes), got `{text}`")
    return key


async def serve_http(server: Server, args: argparse.Namespace) -> None:
    if args.http:
        http = await server.serve_http(
            "127.0.0.1",
            args.port,
            stateless=args.stateless,
            json_response=args.json_response,
            sse_retry=0.5,
            store=args.store,
            websocket=args.ws,
        )
        print(f"conformance server listening on {http.url}", file=sys.stderr, flush=True)
        if args.ws:
            ws_url = http.url.replace("http://", "ws://", 1)
            print(f"conformance server listening on {ws_url}", file=sys.stderr, flush=True)
    else:
        # WebSocket alone (`--ws --port N`): ws://127.0.0.1:N/mcp.
        http = await server.serve_ws("127.0.0.1", args.port)
        print(f"conformance server listening on {http.url}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await http.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true")
    parser.add_argument(
        "--ws", action="store_true", help="serve WebSocket (with --http: both on one port)"
    )
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--store")
    parser.add_argument("--state-key")
    args = parser.parse_args()
    key = parse_key(args.state_key) if args.state_key else None
    server = build(key, scale_out=args.store is not None)
    if args.http or args.ws:
        asyncio.run(serve_http(server, args))
    else:
        server.run()


if __name__ == "__main__":
    main()
