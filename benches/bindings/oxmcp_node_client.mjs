// oxmcp's Node client calling `echo` on the server command given as arguments, exactly as
// the other client benchmarks do: warm-up, sequential, batches of 16 concurrent calls.
import { Client } from "oxmcp";
import { timeCalls } from "../node/client_timing.mjs";

const [command, ...args] = process.argv.slice(2);
const client = await Client.stdio(command, args);
const call = () => client.callTool("echo", { text: "hello from the benchmark" });
await timeCalls(call);
await client.close();
