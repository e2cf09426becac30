// An MCP server built with the official TypeScript SDK (@modelcontextprotocol/sdk 1.x
// `McpServer`), served over stdio.
//
// oxmcp's interop tests (core/tests/interop_typescript.rs) start this script as a child
// process and drive it with oxmcp's client. The tools mirror tests/interop/python/server.py:
// a plain text result, a structured result with an output schema, a tool that fails
// (isError), and argument validation done by the SDK (zod) itself.

import { readFileSync } from "node:fs";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

// The SDK's own version goes into serverInfo, so the Rust test can tell the pinned release is
// the one running.
const sdkPackage = JSON.parse(
  readFileSync(
    new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
    "utf8",
  ),
);

const server = new McpServer(
  { name: "typescript-interop", version: `sdk-${sdkPackage.version}` },
  { instructions: "Test server for oxmcp interop." },
);

server.registerTool(
  "greet",
  {
    description: "Greet someone by name.",
    inputSchema: { name: z.string() },
  },
  async ({ name }) => ({ content: [{ type: "text", text: `Hello, ${name}!` }] }),
);

server.registerTool(
  "add",
  {
    description: "Add two integers.",
    inputSchema: { a: z.number().int(), b: z.number().int() },
    outputSchema: { sum: z.number().int() },
  },
  async ({ a, b }) => {
    const out = { sum: a + b };
    return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
  },
);

server.registerTool(
  "fail",
  {
    description: "Always fails, with the given reason.",
    inputSchema: { reason: z.string().optional() },
  },
  async ({ reason }) => {
    throw new Error(`tool failed: ${reason ?? "boom"}`);
  },
);

await server.connect(new StdioServerTransport());
