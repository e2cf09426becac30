// An MCP server built with the official TypeScript SDK (@modelcontextprotocol/sdk 1.x
// `McpServer`), served over stdio.
//
// oxmcp's interop tests (core/tests/interop) start this script as a child
// process and drive it with oxmcp's client. The tools mirror tests/interop/python/server.py:
// a plain text result, a structured result with an output schema, a tool that fails
// (isError), and argument validation done by the SDK (zod) itself.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

import { SDK_VERSION, registerTools } from "./servers.mjs";

const server = new McpServer(
  { name: "typescript-interop", version: SDK_VERSION },
  { instructions: "Test server for oxmcp interop." },
);

registerTools(server);

await server.connect(new StdioServerTransport());
