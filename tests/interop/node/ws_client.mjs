// Drives oxmcp's conformance server over WebSocket with the official TypeScript SDK 1.x
// client (`WebSocketClientTransport`, removed in 2.x), for core/tests/interop/ws.rs.
//
// Usage: node ws_client.mjs URL [SERVER_NAME]
//
// SERVER_NAME (default "oxmcp-conformance") is the `serverInfo.name` the server must report.
// The transport uses the global `WebSocket`, which Node 20 does not have: the `ws` package
// (pinned in package.json) provides it. Every frame is recorded on its way in and out; the
// script exits 1 with a MISMATCH line on stderr at the first difference.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { WebSocket } from "ws";

import { Host, RecordingTransport, ok, onlyText, runChecks } from "./checks.mjs";

// The SDK release these tests pin (package.json).
const PINNED_SDK = "1.32.2";

globalThis.WebSocket ??= WebSocket;

const [url, serverName = "oxmcp-conformance"] = process.argv.slice(2);

await runChecks(async () => {
  const installed = JSON.parse(
    readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url)),
  ).version;
  assert.equal(installed, PINNED_SDK, "the installed SDK");

  const transport = new RecordingTransport(new WebSocketClientTransport(new URL(url)));
  const client = new Client(
    { name: "typescript-ws-interop", version: "0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const host = new Host();
  host.install(client);
  await client.connect(transport);
  const info = client.getServerVersion();
  assert.equal(info.name, serverName, `serverInfo.name: expected '${serverName}', got '${info.name}'`);
  ok(`connected on ${transport.responseTo("initialize").result.protocolVersion}`);

  const { tools } = await client.listTools();
  const names = new Set(tools.map((t) => t.name));
  for (const needed of ["test_simple_text", "test_tool_with_progress", "test_sampling"]) {
    assert.ok(names.has(needed), `tools/list has ${needed}`);
  }
  ok(`${names.size} tools listed`);

  let result = await client.callTool({ name: "test_simple_text", arguments: {} });
  assert.equal(
    onlyText(result, "test_simple_text"),
    "This is a simple text response for testing.",
  );
  ok("text result");

  const seen = [];
  result = await client.callTool(
    { name: "test_tool_with_progress", arguments: {} },
    undefined,
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.equal(
    onlyText(result, "test_tool_with_progress"),
    "Tool with progress executed successfully",
  );
  // The SDK handles a notification a microtask late but a response at once, and the socket
  // delivers the final progress and the response back to back: the response removes the
  // progress handler first (typescript-sdk#2580, as on the legacy SSE transport). So the
  // callback sees a prefix; the wire carries all three, before the response.
  assert.ok(seen.length >= 2, `progress: ${JSON.stringify(seen)}`);
  assert.deepEqual(seen, [0, 50, 100].slice(0, seen.length), "progress seen");
  const id = transport.sent.findLast((m) => m.method === "tools/call").id;
  const answered = transport.received.findIndex((m) => m.id === id && !m.method);
  const onWire = transport.received
    .slice(0, answered)
    .filter((m) => ProgressNotificationSchema.safeParse(m).success)
    .map((m) => m.params.progress);
  assert.deepEqual(onWire.slice(-3), [0, 50, 100], "progress on the wire, before the answer");
  ok("progress");

  result = await client.callTool({ name: "test_sampling", arguments: { prompt: "What is 2+2?" } });
  assert.equal(onlyText(result, "test_sampling"), "LLM response: echo: What is 2+2?");
  result = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "Who are you?" },
  });
  assert.equal(
    onlyText(result, "test_elicitation"),
    'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
  );
  assert.deepEqual(transport.serverRequests(), ["sampling/createMessage", "elicitation/create"]);
  ok("sampling and elicitation");

  result = await client.callTool({ name: "test_error_handling", arguments: {} });
  assert.equal(result.isError, true, "test_error_handling isError");
  ok("tool error");

  // Every frame we received was one JSON-RPC message (the transport parses each text frame).
  assert.ok(transport.received.every((m) => m.jsonrpc === "2.0"), "JSON-RPC frames");
  await client.close();
});
