// The `echo` tool on oxmcp's Node binding, as a user would write it.
//   node oxmcp_node_echo.mjs stdio
//   node oxmcp_node_echo.mjs http PORT
import { Server } from "oxmcp";

const server = new Server({ name: "echo", version: "1.0.0" });
server.tool(
  "echo",
  { description: "Echo the text", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  ({ text }) => text,
);
const [mode, port] = process.argv.slice(2);
if (mode === "stdio") await server.runStdio();
else await server.runHttp({ host: "127.0.0.1", port: Number(port) });
