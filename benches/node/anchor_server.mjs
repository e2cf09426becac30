// The `echo` tool on the official TypeScript SDK (1.32), as its README shows:
//   node anchor_server.mjs stdio
//   node anchor_server.mjs http|http-json PORT   (createMcpExpressApp + a stateful
//                                                 StreamableHTTPServerTransport per session)
// With BENCH_TOOLS=N it registers N more tools (the catalogue rows).
import { randomUUID } from "node:crypto";

import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function build() {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  for (let i = 0; i < Number(process.env.BENCH_TOOLS ?? 0); i++) {
    server.registerTool(
      `tool_${i}`,
      { description: `Tool number ${i} of the catalogue`, inputSchema: { n: z.number().int().optional() } },
      async () => ({ content: [{ type: "text", text: String(i) }] }),
    );
  }
  return server;
}

const [mode, portArg] = process.argv.slice(2);
if (mode === "stdio") {
  await build().connect(new StdioServerTransport());
} else {
  const json = mode === "http-json";
  const app = createMcpExpressApp();
  const sessions = new Map();
  app.post("/mcp", async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (id !== undefined || !isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request" }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const listener = app.listen(Number(portArg ?? 0), "127.0.0.1", () => {
    console.error(`listening on http://127.0.0.1:${listener.address().port}/mcp`);
  });
}
