// Drives oxmcp's conformance server over Streamable HTTP with the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.x `Client` + `StreamableHTTPClientTransport`).
//
// Usage: node http_client.mjs KIND URL
//
// KIND says how the server was started: "stateful" (`conformance_server --http`, sessions) or
// "stateless" (`--http --stateless`); "sse" connects with the legacy HTTP+SSE client
// (`SSEClientTransport`, the 2024-11-05 transport) to URL instead, with no transport checks.
// The SDK speaks the handshake era (2025-11-25). Every HTTP exchange goes through a recording
// `fetch`, so the script checks the transport as well as the results: the session id the
// server handed out and that every later request carried it, the `MCP-Protocol-Version`
// header, JSON versus SSE answers, the GET stream. Covered: tools (text, isError, unknown
// tool), progress and log notifications on a request's SSE stream, sampling and elicitation
// (server-to-client requests, answered with POSTs), stream resumption after the server cuts
// a response stream, and the end of a session (DELETE, then 404 for the old id).
// Without a session (stateless), the tools that ask the client fail at once.
//
// The expected texts are those of examples/rust/conformance/fixture.rs. The script exits
// non-zero with a MISMATCH line on stderr at the first difference;
// core/tests/interop runs it.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { Host, ok, onlyText, runChecks } from "./checks.mjs";

const PINNED_SDK = "1.32.2";
const KINDS = ["stateful", "stateless", "sse"];
const LOG_LINES = [
  { level: "info", logger: "conformance", data: "Tool execution started" },
  { level: "info", logger: "conformance", data: "Tool processing data" },
  { level: "info", logger: "conformance", data: "Tool execution completed" },
];

/** Every HTTP exchange of the transport, as the response headers arrive. */
class HttpLog {
  constructor() {
    this.exchanges = [];
    this.fetch = async (url, init = {}) => {
      const response = await fetch(url, init);
      const headers = new Headers(init.headers);
      let rpc = null;
      if (typeof init.body === "string") {
        try {
          rpc = JSON.parse(init.body).method ?? null;
        } catch {
          rpc = null;
        }
      }
      this.exchanges.push({
        method: init.method ?? "GET",
        rpc,
        session: headers.get("mcp-session-id"),
        version: headers.get("mcp-protocol-version"),
        lastEventId: headers.get("last-event-id"),
        status: response.status,
        contentType: (response.headers.get("content-type") ?? "").split(";")[0],
        newSession: response.headers.get("mcp-session-id"),
      });
      return response;
    };
  }

  dump() {
    return this.exchanges.map((e) => JSON.stringify(e)).join("\n");
  }

  posts(rpc) {
    return this.exchanges.filter((e) => e.method === "POST" && e.rpc === rpc);
  }
}

async function checkTools(client, log, kind) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ["test_simple_text", "test_error_handling", "test_tool_with_progress"]) {
    assert.ok(names.includes(name), `tools/list lacks ${name}: ${names}`);
  }
  ok(`tools/list (${names.length} tools)`);

  const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
  assert.deepEqual(
    [simple.isError ?? false, onlyText(simple, "test_simple_text")],
    [false, "This is a simple text response for testing."],
  );
  const failed = await client.callTool({ name: "test_error_handling", arguments: {} });
  assert.deepEqual(
    [failed.isError, onlyText(failed, "test_error_handling")],
    [true, "This tool intentionally returns an error for testing"],
  );
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (error) => {
    assert.ok(error instanceof McpError, `not an McpError: ${error}`);
    assert.equal(error.code, -32602);
    assert.equal(error.message, "MCP error -32602: Unknown tool: no_such_tool");
    return true;
  });
  ok("tools/call: text, isError, unknown tool is JSON-RPC -32602");

  const progress = [];
  const result = await client.callTool(
    { name: "test_tool_with_progress", arguments: {} },
    undefined,
    { onprogress: (p) => progress.push([p.progress, p.total]) },
  );
  assert.equal(onlyText(result, "progress"), "Tool with progress executed successfully");
  if (kind === "sse") {
    // The SDK handles notifications a microtask late but responses at once, and the legacy
    // transport hands it the final progress and the response in one read: the response
    // removes the progress handler first (typescript-sdk#2580). The wire order is right
    // (checked with oxmcp's own client); what reaches the callback is a prefix.
    const all = [[0, 100], [50, 100], [100, 100]];
    assert.ok(progress.length >= 2, `progress: ${JSON.stringify(progress)}`);
    assert.deepEqual(progress, all.slice(0, progress.length), "progress");
  } else {
    assert.deepEqual(progress, [[0, 100], [50, 100], [100, 100]], "progress");
  }
  if (kind !== "sse") {
    const answer = log.posts("tools/call").at(-1);
    assert.equal(answer.contentType, "text/event-stream", "progress answer");
  }
  ok("progress notifications on the request's SSE stream");

  if (kind === "stateful") {
    // The server cuts the response stream before answering; the SDK resumes it with a GET
    // carrying Last-Event-ID and gets the answer there.
    const resumed = await client.callTool({ name: "test_reconnection", arguments: {} });
    assert.equal(onlyText(resumed, "test_reconnection"), "Reconnection test completed");
    const gets = log.exchanges.filter((e) => e.method === "GET" && e.lastEventId);
    assert.equal(gets.length, 1, `one resumption GET expected:\n${log.dump()}`);
    assert.deepEqual([gets[0].status, gets[0].contentType], [200, "text/event-stream"]);
    ok(`a cut response stream is resumed (Last-Event-ID ${gets[0].lastEventId})`);
  }
}

async function checkLogging(client, host) {
  await client.setLoggingLevel("info");
  const result = await client.callTool({ name: "test_tool_with_logging", arguments: {} });
  assert.equal(onlyText(result, "logging"), "Tool with logging executed successfully");
  assert.deepEqual(await host.waitForLogs(3), LOG_LINES, "log messages at info");
  ok("logging: notifications/message on the request's stream");
}

async function checkQuestions(client, host, kind) {
  if (kind === "stateless") {
    // No session: the server has nowhere to receive an answer from, and says so at once.
    for (const [name, args] of [
      ["test_sampling", { prompt: "What is 2+2?" }],
      ["test_elicitation", { message: "Who are you?" }],
    ]) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name} without a session: ${JSON.stringify(result)}`);
      ok(`${name} without a session is a tool error: ${JSON.stringify(onlyText(result, name))}`);
    }
    assert.deepEqual(host.takeAsked(), [], "questions asked without a session");
    return;
  }
  const sampled = await client.callTool({
    name: "test_sampling",
    arguments: { prompt: "What is 2+2?" },
  });
  assert.equal(onlyText(sampled, "test_sampling"), "LLM response: echo: What is 2+2?");
  const accepted = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "Who are you?" },
  });
  assert.equal(
    onlyText(accepted, "test_elicitation"),
    'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
  );
  const declined = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "decline, please" },
  });
  assert.equal(onlyText(declined, "declined"), "User response: action=decline, content={}");
  assert.deepEqual(
    host.takeAsked().map(([kind]) => kind),
    ["sampling", "elicitation", "elicitation"],
  );
  ok("sampling and elicitation over the session");
  const sloppy = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "sloppy" },
  });
  const text = onlyText(sloppy, "sloppy answer");
  assert.ok(sloppy.isError && text.includes("does not match the requested schema"), text);
  host.takeAsked();
  ok("an elicitation answer that breaks the schema is a tool error");
}

function checkHttp(log, kind) {
  const init = log.posts("initialize");
  assert.equal(init.length, 1, "initialize POSTs");
  assert.equal(init[0].status, 200, "initialize status");
  const later = log.exchanges.filter((e) => e !== init[0]);
  for (const e of later) {
    assert.equal(e.version, "2025-11-25", `MCP-Protocol-Version:\n${log.dump()}`);
  }
  if (kind === "stateless") {
    assert.deepEqual(
      [...new Set(log.exchanges.map((e) => e.newSession))],
      [null],
      "session ids handed out",
    );
    const gets = log.exchanges.filter((e) => e.method === "GET").map((e) => e.status);
    assert.ok(gets.every((s) => s === 405), `GET statuses ${gets}`);
    ok("HTTP: handshake without a session id, GET refused with 405");
    return null;
  }
  const session = init[0].newSession;
  assert.ok(session && session.length >= 16, `session id ${session}`);
  for (const e of later) {
    assert.equal(e.session, session, `a request without the session id:\n${log.dump()}`);
  }
  const get = log.exchanges.find((e) => e.method === "GET" && !e.lastEventId);
  assert.ok(get, "no GET stream was opened");
  assert.deepEqual([get.status, get.contentType], [200, "text/event-stream"], "GET stream");
  ok(`HTTP: session ${session.slice(0, 8)}… on every request, GET stream open`);
  return session;
}

async function run(kind, url) {
  const sdkPackage = JSON.parse(
    readFileSync(
      new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
      "utf8",
    ),
  );
  assert.equal(sdkPackage.version, PINNED_SDK, "installed SDK version");

  const log = new HttpLog();
  const transport =
    kind === "sse"
      ? new SSEClientTransport(new URL(url), { fetch: log.fetch })
      : new StreamableHTTPClientTransport(new URL(url), { fetch: log.fetch });
  // The revision the client adopted from the initialize result.
  let negotiated;
  const setProtocolVersion = transport.setProtocolVersion.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion(version);
  };
  const client = new Client(
    { name: "typescript-http-client", version: PINNED_SDK },
    { capabilities: { sampling: {}, elicitation: { form: {} } } },
  );
  const host = new Host();
  host.install(client);
  await client.connect(transport);
  try {
    assert.equal(negotiated, "2025-11-25", "negotiated protocol version");
    assert.equal(client.getServerVersion().name, "oxmcp-conformance", "serverInfo.name");
    ok(`connected on ${negotiated} (${kind})`);
    if (kind === "sse") {
      await checkTools(client, log, kind);
      await checkLogging(client, host);
      await checkQuestions(client, host, kind);
      return;
    }
    await checkTools(client, log, kind);
    await checkLogging(client, host);
    await checkQuestions(client, host, kind);
    const session = checkHttp(log, kind);
    assert.equal(transport.sessionId ?? null, session, "the transport's session id");
    if (session !== null) {
      // The end of the session: DELETE, and the server forgets the id (404 from then on).
      await transport.terminateSession();
      const deleted = log.exchanges.at(-1);
      assert.deepEqual([deleted.method, deleted.status], ["DELETE", 200], "DELETE");
      const stale = new StreamableHTTPClientTransport(new URL(url), {
        fetch: log.fetch,
        sessionId: session,
      });
      // Straight through the transport: Client.connect() would open a new session.
      await stale.start();
      stale.setProtocolVersion("2025-11-25");
      await assert.rejects(
        stale.send({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
        (error) => {
          assert.equal(error.code, 404, `${error}`);
          assert.ok(error.message.includes("Session not found"), error.message);
          return true;
        },
        "a request on the deleted session",
      );
      await stale.close();
      ok("after DELETE the old session id is answered 404");
    }
  } finally {
    await client.close();
  }
}

if (process.argv.length !== 4 || !KINDS.includes(process.argv[2])) {
  console.error(`usage: node http_client.mjs ${KINDS.join("|")} URL`);
  process.exit(2);
}
await runChecks(() => run(process.argv[2], process.argv[3]));
