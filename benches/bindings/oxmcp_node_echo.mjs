// The `echo` tool on oxmcp's Node binding, as a user would write it: `async`, as the README
// shows it, or a plain function.
//   node oxmcp_node_echo.mjs async|sync stdio
//   node oxmcp_node_echo.mjs async|sync http PORT
// With BENCH_TOOLS=N it registers N more tools (the catalogue rows).
import { Server } from "oxmcp";

const [flavour, mode, port] = process.argv.slice(2);
const inputSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const server = new Server({ name: "echo", version: "1.0.0" });
if (flavour === "async") server.tool("echo", { description: "Echo the text", inputSchema }, async ({ text }) => text);
else server.tool("echo", { description: "Echo the text", inputSchema }, ({ text }) => text);
const nSchema = { type: "object", properties: { n: { type: "integer" } } };
for (let i = 0; i < Number(process.env.BENCH_TOOLS ?? 0); i++) {
  server.tool(`tool_${i}`, { description: `Tool number ${i} of the catalogue`, inputSchema: nSchema }, () => String(i));
}
if (mode === "stdio") await server.runStdio();
// JSON responses, the mode the raw hyper limit answers in.
else await server.runHttp({ host: "127.0.0.1", port: Number(port), jsonResponse: true });
