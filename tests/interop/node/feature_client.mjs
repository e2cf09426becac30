// Drives oxmcp's conformance server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.x `Client` + `StdioClientTransport`), feature by feature.
//
// Usage: node feature_client.mjs SERVER_COMMAND [ARG...]
//
// The server is examples/rust/conformance_server.rs; the expected texts are those of
// examples/rust/conformance/fixture.rs. The SDK speaks the handshake era (it asks for
// 2025-11-25), so the server's questions arrive as requests. Covered: resources (list, text,
// blob), the resource template (list, read through it), resources/subscribe and unsubscribe,
// prompts (list, arguments, embedded resource, image), completion (a prompt argument, a
// template variable), logging (logging/setLevel), sampling and elicitation (including
// SEP-1034 defaults, filled in by the SDK's `applyDefaults`), each with a bad-input
// neighbour. Roots are not covered: the fixture has no tool that asks the client for them.
//
// Every frame is recorded on its way in and out, so the checks look at the wire as well as at
// the SDK's parsed results. The script exits non-zero with a MISMATCH line on stderr at the
// first difference; core/tests/interop runs it.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { DEFAULTS_MESSAGE, Host, RecordingTransport, ok, onlyText, runChecks } from "./checks.mjs";

const PINNED_SDK = "1.32.2";

// From examples/rust/conformance/fixture.rs.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const RESOURCES = [
  {
    uri: "test://static-text",
    name: "static-text",
    description: "A static text resource",
    mimeType: "text/plain",
  },
  {
    uri: "test://static-binary",
    name: "static-binary",
    description: "A static binary resource (a PNG)",
    mimeType: "image/png",
  },
  {
    uri: "test://watched-resource",
    name: "watched-resource",
    description: "A resource clients can subscribe to",
    mimeType: "text/plain",
  },
];
const TEMPLATE = "test://template/{id}/data";
const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds a resource",
    arguments: [
      { name: "resourceUri", description: "URI of the resource to embed", required: true },
    ],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image" },
  { name: "test_input_required_result_prompt", description: "A prompt that asks for context first" },
];
const LOG_LINES = [
  { level: "info", logger: "conformance", data: "Tool execution started" },
  { level: "info", logger: "conformance", data: "Tool processing data" },
  { level: "info", logger: "conformance", data: "Tool execution completed" },
];
const DEFAULTS_PROPERTIES = {
  name: { type: "string", description: "User name", default: "John Doe" },
  age: { type: "integer", description: "User age", default: 30 },
  score: { type: "number", description: "User score", default: 95.5 },
  status: {
    type: "string",
    description: "User status",
    enum: ["active", "inactive", "pending"],
    default: "active",
  },
  verified: { type: "boolean", description: "Verification status", default: true },
};
const CONTACT_SCHEMA = {
  type: "object",
  properties: {
    username: { type: "string", description: "User's response" },
    email: { type: "string", description: "User's email address" },
  },
  required: ["username", "email"],
};

async function expectError(promise, code, message, what) {
  let caught;
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof McpError, `${what}: not an McpError: ${error}`);
    assert.equal(error.code, code, `${what}: code`);
    assert.equal(error.message, `MCP error ${code}: ${message}`, `${what}: message`);
    caught = error;
    return true;
  });
  return caught;
}

async function checkResources(client, transport) {
  const listed = await client.listResources();
  assert.deepEqual(listed.resources, RESOURCES, "resources/list");
  assert.equal(listed.nextCursor, undefined, "resources/list nextCursor");
  const text = await client.readResource({ uri: "test://static-text" });
  assert.deepEqual(
    text.contents,
    [
      {
        uri: "test://static-text",
        mimeType: "text/plain",
        text: "This is the content of the static text resource.",
      },
    ],
    "read test://static-text",
  );
  const blob = await client.readResource({ uri: "test://static-binary" });
  assert.deepEqual(
    blob.contents,
    [{ uri: "test://static-binary", mimeType: "image/png", blob: PNG }],
    "read test://static-binary",
  );
  ok("resources: list, text, blob");

  const templates = await client.listResourceTemplates();
  assert.deepEqual(
    templates.resourceTemplates,
    [
      {
        uriTemplate: TEMPLATE,
        name: "template",
        description: "A templated resource",
        mimeType: "application/json",
      },
    ],
    "resources/templates/list",
  );
  const item = await client.readResource({ uri: "test://template/42/data" });
  assert.equal(item.contents.length, 1, "template read: number of contents");
  const [contents] = item.contents;
  assert.deepEqual(
    [contents.uri, contents.mimeType],
    ["test://template/42/data", "application/json"],
    "template read: uri and mimeType",
  );
  assert.deepEqual(
    JSON.parse(contents.text),
    { id: "42", templateTest: true, data: "Data for ID: 42" },
    "template read: text",
  );
  ok("resource template: list, read through it");

  const error = await expectError(
    client.readResource({ uri: "test://nope" }),
    -32002,
    "Resource not found: test://nope",
    "unknown resource",
  );
  assert.deepEqual(error.data, { uri: "test://nope" }, "unknown resource: data");
  // A URI the template does not match is just as unknown.
  await expectError(
    client.readResource({ uri: "test://template/42" }),
    -32002,
    "Resource not found: test://template/42",
    "a URI the template does not match",
  );
  ok("unknown resource is JSON-RPC -32002");

  assert.equal(client.getServerCapabilities().resources.subscribe, true, "resources.subscribe");
  await client.subscribeResource({ uri: "test://watched-resource" });
  assert.deepEqual(transport.responseTo("resources/subscribe").result, {}, "subscribe result");
  await client.unsubscribeResource({ uri: "test://watched-resource" });
  assert.deepEqual(transport.responseTo("resources/unsubscribe").result, {}, "unsubscribe result");
  ok("resources/subscribe and unsubscribe");
}

async function checkPrompts(client) {
  const listed = await client.listPrompts();
  assert.deepEqual(listed.prompts, PROMPTS, "prompts/list");
  const simple = await client.getPrompt({ name: "test_simple_prompt" });
  assert.deepEqual(
    simple.messages,
    [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
    "test_simple_prompt",
  );
  const withArgs = await client.getPrompt({
    name: "test_prompt_with_arguments",
    arguments: { arg1: "a", arg2: "b" },
  });
  assert.deepEqual(
    withArgs.messages,
    [
      {
        role: "user",
        content: { type: "text", text: "Prompt with arguments: arg1='a', arg2='b'" },
      },
    ],
    "test_prompt_with_arguments",
  );
  const embedded = await client.getPrompt({
    name: "test_prompt_with_embedded_resource",
    arguments: { resourceUri: "test://static-text" },
  });
  assert.deepEqual(
    embedded.messages,
    [
      {
        role: "user",
        content: {
          type: "resource",
          resource: {
            uri: "test://static-text",
            mimeType: "text/plain",
            text: "Embedded resource content for testing.",
          },
        },
      },
      {
        role: "user",
        content: { type: "text", text: "Please process the embedded resource above." },
      },
    ],
    "test_prompt_with_embedded_resource",
  );
  const image = await client.getPrompt({ name: "test_prompt_with_image" });
  assert.deepEqual(
    image.messages,
    [
      { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
    "test_prompt_with_image",
  );
  ok("prompts: list, arguments, embedded resource, image");

  await expectError(
    client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a" } }),
    -32602,
    "Missing required argument(s) for prompt `test_prompt_with_arguments`: arg2",
    "missing prompt argument",
  );
  await expectError(
    client.getPrompt({ name: "nope" }),
    -32602,
    "Unknown prompt: nope",
    "unknown prompt",
  );
  ok("missing argument and unknown prompt are JSON-RPC -32602");
}

async function checkCompletion(client, transport) {
  assert.ok(client.getServerCapabilities().completions, "completions capability");
  const ref = { type: "ref/prompt", name: "test_prompt_with_arguments" };
  const words = await client.complete({ ref, argument: { name: "arg1", value: "pa" } });
  assert.deepEqual(
    words.completion,
    { values: ["paris", "park", "party"], total: 3, hasMore: false },
    "complete arg1",
  );
  const ids = await client.complete({
    ref: { type: "ref/resource", uri: TEMPLATE },
    argument: { name: "id", value: "4" },
    context: { arguments: { other: "x" } },
  });
  assert.deepEqual(ids.completion, { values: ["42"], total: 1, hasMore: false }, "complete id");
  assert.deepEqual(
    transport.sent.findLast((m) => m.method === "completion/complete").params.context,
    { arguments: { other: "x" } },
    "completion context on the wire",
  );
  const none = await client.complete({ ref, argument: { name: "arg2", value: "pa" } });
  assert.deepEqual(none.completion, { values: [], total: 0, hasMore: false }, "complete arg2");
  ok("completion: prompt argument, template variable");

  await expectError(
    client.complete({
      ref: { type: "ref/prompt", name: "nope" },
      argument: { name: "a", value: "" },
    }),
    -32602,
    "Unknown prompt: nope",
    "completion for an unknown prompt",
  );
  await expectError(
    client.complete({
      ref: { type: "ref/resource", uri: "test://other/{id}" },
      argument: { name: "id", value: "" },
    }),
    -32602,
    "Unknown resource template: test://other/{id}",
    "completion for an unknown template",
  );
  ok("completion for unknown references is JSON-RPC -32602");
}

async function checkLogging(client, host) {
  await client.setLoggingLevel("info");
  const result = await client.callTool({ name: "test_tool_with_logging", arguments: {} });
  assert.equal(onlyText(result, "logging"), "Tool with logging executed successfully");
  assert.deepEqual(await host.waitForLogs(3), LOG_LINES, "log messages at info");
  await client.setLoggingLevel("warning");
  await client.callTool({ name: "test_tool_with_logging", arguments: {} });
  // Another round trip: any log line of the call would have come before its result.
  await client.listTools();
  assert.deepEqual(host.logs, [], "log messages at warning");
  ok("logging: logging/setLevel");
}

async function checkSampling(client, host, transport) {
  const result = await client.callTool({
    name: "test_sampling",
    arguments: { prompt: "What is 2+2?" },
  });
  assert.notEqual(result.isError, true, `test_sampling failed: ${JSON.stringify(result)}`);
  assert.equal(onlyText(result, "test_sampling"), "LLM response: echo: What is 2+2?");
  assert.deepEqual(
    host.takeAsked(),
    [
      [
        "sampling",
        {
          messages: [{ role: "user", content: { type: "text", text: "What is 2+2?" } }],
          maxTokens: 100,
        },
      ],
    ],
    "sampling request",
  );
  ok("sampling");

  host.refuseSampling = true;
  const refused = await client.callTool({ name: "test_sampling", arguments: { prompt: "x" } });
  const text = onlyText(refused, "refused sampling");
  assert.ok(refused.isError && text.includes("User rejected sampling"), text);
  assert.deepEqual(
    transport.answerTo("sampling/createMessage").error,
    { code: -1, message: "MCP error -1: User rejected sampling" },
    "the refusal on the wire",
  );
  host.refuseSampling = false;
  host.takeAsked();
  ok("refused sampling");
}

async function checkElicitation(client, host, transport) {
  const accepted = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "Who are you?" },
  });
  assert.equal(
    onlyText(accepted, "test_elicitation"),
    'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
  );
  assert.deepEqual(
    host.takeAsked(),
    // `mode` is optional for a form in 2025-11-25; oxmcp leaves it out.
    [["elicitation", { message: "Who are you?", requestedSchema: CONTACT_SCHEMA }]],
    "elicitation request",
  );
  const declined = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "decline, please" },
  });
  assert.equal(onlyText(declined, "declined"), "User response: action=decline, content={}");
  ok("elicitation: accept, decline");

  host.takeAsked();
  const defaults = await client.callTool({ name: "test_elicitation_sep1034_defaults" });
  assert.equal(
    onlyText(defaults, "sep1034"),
    'Elicitation completed: action=accept, content={"name":"Ada","age":30,"score":95.5,' +
      '"status":"active","verified":true}',
  );
  const [[kind, params]] = host.takeAsked();
  assert.deepEqual(
    [kind, params.message, params.requestedSchema.properties],
    ["elicitation", DEFAULTS_MESSAGE, DEFAULTS_PROPERTIES],
    "SEP-1034 request",
  );
  assert.deepEqual(
    transport.answerTo("elicitation/create").result.content,
    { name: "Ada", age: 30, score: 95.5, status: "active", verified: true },
    "SEP-1034 answer on the wire",
  );
  ok("elicitation: SEP-1034 defaults filled by the client");

  const sloppy = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "sloppy" },
  });
  const text = onlyText(sloppy, "sloppy answer");
  assert.ok(sloppy.isError && text.includes("does not match the requested schema"), text);
  host.takeAsked();
  ok("an elicitation answer that breaks the schema is a tool error");
}

async function checkMissingCapability(command, args) {
  const transport = new StdioClientTransport({ command, args, env: { RUST_LOG: "warn" } });
  const client = new Client({ name: "typescript-interop-bare-client", version: PINNED_SDK });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "test_missing_capability", arguments: {} });
    assert.deepEqual(
      [result.isError, onlyText(result, "missing capability")],
      [true, "invalid argument: the client did not declare the `sampling` capability"],
      "missing capability",
    );
  } finally {
    await client.close();
  }
  ok("a client without the sampling capability");
}

async function run(command, args) {
  const sdkPackage = JSON.parse(
    readFileSync(
      new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
      "utf8",
    ),
  );
  assert.equal(sdkPackage.version, PINNED_SDK, "installed SDK version");

  const transport = new RecordingTransport(
    new StdioClientTransport({ command, args, env: { RUST_LOG: "warn" } }),
  );
  const client = new Client(
    { name: "typescript-interop-feature-client", version: PINNED_SDK },
    { capabilities: { sampling: {}, elicitation: { form: { applyDefaults: true } } } },
  );
  const host = new Host();
  host.install(client);
  await client.connect(transport);
  try {
    const init = transport.responseTo("initialize");
    assert.equal(init.result.protocolVersion, "2025-11-25", "negotiated protocol version");
    assert.deepEqual(
      transport.sent[0].params.capabilities,
      { sampling: {}, elicitation: { form: { applyDefaults: true } } },
      "declared capabilities",
    );
    assert.equal(client.getServerVersion().name, "oxmcp-conformance", "serverInfo.name");
    ok(`connected on ${init.result.protocolVersion}`);

    await checkResources(client, transport);
    await checkPrompts(client);
    await checkCompletion(client, transport);
    await checkLogging(client, host);
    await checkSampling(client, host, transport);
    await checkElicitation(client, host, transport);
    // Every question came as a server-to-client request (handshake era).
    assert.deepEqual(
      [...new Set(transport.serverRequests())].sort(),
      ["elicitation/create", "sampling/createMessage"],
      "server requests",
    );
    assert.deepEqual(host.asked, [], "unexpected questions");
  } finally {
    await client.close();
  }
  await checkMissingCapability(command, args);
}

if (process.argv.length < 3) {
  console.error("usage: node feature_client.mjs SERVER_COMMAND [ARG...]");
  process.exit(2);
}
await runChecks(() => run(process.argv[2], process.argv.slice(3)));
