// The official TypeScript SDK's client (1.32, StdioClientTransport) calling `echo` on the
// server command given as arguments: 200 warm-up calls, sequential calls, batches of 16
// concurrent calls. Prints one JSON line like the Rust client benchmarks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { timeCalls } from "./client_timing.mjs";

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "bench", version: "1.0" });
await client.connect(new StdioClientTransport({ command, args }));
const call = () => client.callTool({ name: "echo", arguments: { text: "hello from the benchmark" } });
await timeCalls(call);
await client.close();
