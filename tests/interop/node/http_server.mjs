// An MCP server built with the official TypeScript SDK (@modelcontextprotocol/sdk 1.x
// `McpServer`), served over HTTP on a plain `node:http` server.
//
// Usage: node http_server.mjs MODE [--port N]
//
// MODE picks the SDK transport:
//
// - "stateful": `StreamableHTTPServerTransport` with a session id generator, one transport and
//   one McpServer per session (the SDK's own example routing: `initialize` without a session
//   opens one; an unknown session id is answered 404, as the spec asks);
// - "stateless": `sessionIdGenerator: undefined`, a new transport and McpServer per request;
// - "stateful-json" / "stateless-json": the same with `enableJsonResponse: true`;
// - "sse": the legacy HTTP+SSE transport of 2024-11-05 (`SSEServerTransport`): `GET /sse`
//   opens the stream and names `POST /messages?sessionId=…` in its `endpoint` event.
//
// The tools mirror server.mjs (greet, add, fail) plus `steps` (logs and reports progress on the
// request's own stream), `ask_model` (sampling/createMessage) and `ask_user` (form
// elicitation), which echo what the client answered. Their questions go on the tool call's
// response stream, or with JSON responses on the session's GET stream. The server prints
// "listening on URL" on stdout once it listens (port 0, the default, lets the OS choose);
// core/tests/interop reads that line. It runs until killed.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

import { CONTACT_SCHEMA, SDK_VERSION, registerTools, text } from "./servers.mjs";

const MODES = ["stateful", "stateless", "stateful-json", "stateless-json", "sse"];

// `related`: whether the server's questions travel on the tool call's own response stream.
// A JSON-only transport has no such stream (the SDK drops what is sent there), so its
// questions go to the session's GET stream instead.
function buildServer({ related = true } = {}) {
  const on = (extra) => (related ? { relatedRequestId: extra.requestId } : {});
  const server = new McpServer(
    { name: "typescript-http", version: SDK_VERSION },
    { instructions: "HTTP test server for oxmcp interop.", capabilities: { logging: {} } },
  );

  registerTools(server);

  // Notifications related to the request travel on its own response stream (SSE), unless the
  // transport answers with JSON only, which has no room for them.
  server.registerTool(
    "steps",
    {
      description: "Logs and reports progress for each of `count` steps.",
      inputSchema: { count: z.number().int() },
    },
    async ({ count }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= count; i++) {
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", logger: "steps", data: `step ${i}` },
        });
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: count, message: `step ${i}` },
          });
        }
      }
      return text(`did ${count} steps`);
    },
  );

  server.registerTool(
    "ask_model",
    {
      description: "Asks the client's model (sampling/createMessage) and echoes its answer.",
      inputSchema: { prompt: z.string() },
    },
    async ({ prompt }, extra) => {
      const answer = await server.server.createMessage(
        {
          messages: [{ role: "user", content: { type: "text", text: prompt } }],
          maxTokens: 64,
        },
        on(extra),
      );
      const said = answer.content.type === "text" ? answer.content.text : answer.content;
      return text(`model ${answer.model} said ${JSON.stringify(said)}`);
    },
  );

  server.registerTool(
    "ask_user",
    {
      description: "Asks the user (elicitation/create, form mode) and echoes the answer.",
      inputSchema: { message: z.string() },
    },
    async ({ message }, extra) => {
      const answer = await server.server.elicitInput(
        { message, requestedSchema: CONTACT_SCHEMA },
        on(extra),
      );
      if (answer.action === "accept") {
        return text(`accept: ${JSON.stringify(answer.content)}`);
      }
      return text(answer.action);
    },
  );

  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function rpcError(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Reads a POST body as JSON; answers a parse error itself (and returns undefined). */
async function jsonBody(req, res) {
  if (req.method !== "POST") {
    return undefined;
  }
  const raw = await readBody(req);
  try {
    return { value: JSON.parse(raw) };
  } catch {
    rpcError(res, 400, -32700, "Parse error");
    return null;
  }
}

function streamableHandler(mode) {
  const json = mode.endsWith("-json");
  if (mode.startsWith("stateless")) {
    return async (req, res) => {
      const body = await jsonBody(req, res);
      if (body === null) return;
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: json,
      });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body?.value);
    };
  }
  const sessions = new Map();
  return async (req, res) => {
    const body = await jsonBody(req, res);
    if (body === null) return;
    const id = req.headers["mcp-session-id"];
    if (id !== undefined) {
      const transport = sessions.get(id);
      if (transport === undefined) {
        rpcError(res, 404, -32001, "Session not found");
        return;
      }
      await transport.handleRequest(req, res, body?.value);
      return;
    }
    if (req.method === "POST" && isInitializeRequest(body.value)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildServer({ related: !json }).connect(transport);
      await transport.handleRequest(req, res, body.value);
      return;
    }
    rpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
  };
}

function sseHandler() {
  const sessions = new Map();
  return async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      res.on("close", () => sessions.delete(transport.sessionId));
      await buildServer().connect(transport);
      return;
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId"));
      if (transport === undefined) {
        res.writeHead(404).end("Session not found");
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(req.url.startsWith("/sse") ? 405 : 404).end();
  };
}

const mode = process.argv[2];
if (!MODES.includes(mode)) {
  console.error(`usage: node http_server.mjs ${MODES.join("|")} [--port N]`);
  process.exit(2);
}
const portAt = process.argv.indexOf("--port");
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : 0;
const path = mode === "sse" ? "/sse" : "/mcp";
const handle = mode === "sse" ? sseHandler() : streamableHandler(mode);

const http = createServer((req, res) => {
  const pathname = new URL(req.url, "http://localhost").pathname;
  if (mode !== "sse" && pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  handle(req, res).catch((e) => {
    console.error(`request failed: ${e?.stack ?? e}`);
    if (!res.headersSent) rpcError(res, 500, -32603, "Internal server error");
  });
});
http.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${http.address().port}${path}`);
});
