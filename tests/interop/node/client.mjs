// Drives oxmcp's example weather server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.x `Client` + `StdioClientTransport`).
//
// Usage: node client.mjs SERVER_COMMAND [ARG...]
//
// The SDK client always opens with `initialize` at its newest revision (2025-11-25). Every
// frame is recorded on its way in and out, so the checks below look at the wire as well as at
// the SDK's parsed results. The script exits non-zero with a MISMATCH line on stderr at the
// first difference; core/tests/interop runs it.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

import { RecordingTransport, ok, onlyText, runChecks } from "./checks.mjs";

// The SDK release these tests pin (package.json).
const PINNED_SDK = "1.32.2";

// get_weather's schemas exactly as examples/rust/weather_server.rs declares them.
const INPUT_SCHEMA = {
  type: "object",
  properties: { city: { type: "string", description: "City name, e.g. Beijing or 北京" } },
  required: ["city"],
  additionalProperties: false,
};
const OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    temperature_c: { type: "number" },
    conditions: { type: "string" },
    humidity_pct: { type: "integer" },
    wind_kmh: { type: "integer" },
  },
  required: ["city", "temperature_c", "conditions", "humidity_pct", "wind_kmh"],
};
const OSLO = {
  city: "Oslo",
  temperature_c: 4.0,
  conditions: "light snow",
  humidity_pct: 86,
  wind_kmh: 12,
};
const OSLO_TEXT = "Oslo: 4.0 °C, light snow, humidity 86%, wind 12 km/h";

async function toolError(client, args, what) {
  const result = await client.callTool({ name: "get_weather", arguments: args });
  assert.equal(result.isError, true, `${what}: isError`);
  assert.equal(result.structuredContent, undefined, `${what}: structuredContent`);
  return onlyText(result, what);
}

async function run(command, args) {
  const sdkPackage = JSON.parse(
    readFileSync(
      new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
      "utf8",
    ),
  );
  assert.equal(sdkPackage.version, PINNED_SDK, "installed SDK version");

  const transport = new RecordingTransport(
    new StdioClientTransport({ command, args, env: { RUST_LOG: "warn" } }),
  );
  const client = new Client({ name: "typescript-interop-client", version: PINNED_SDK });
  await client.connect(transport);
  try {
    // Negotiation: the SDK has no server/discover; it asks for 2025-11-25 and our server,
    // which speaks every revision, must grant exactly that.
    assert.equal(transport.sent[0].method, "initialize", "first request");
    assert.equal(transport.sent[0].params.protocolVersion, "2025-11-25", "requested revision");
    const init = transport.responseTo("initialize");
    assert.equal(init.result.protocolVersion, "2025-11-25", "negotiated protocol version");
    assert.ok(
      transport.sent.some((m) => m.method === "notifications/initialized"),
      "notifications/initialized was not sent",
    );
    assert.equal(client.getServerVersion().name, "weather", "serverInfo.name");
    assert.ok(client.getServerCapabilities().tools, "tools capability missing");
    assert.equal(
      client.getInstructions(),
      "Current weather for a handful of world cities, from embedded data.",
      "instructions",
    );
    ok(`connected on ${init.result.protocolVersion}`);

    const listed = await client.listTools();
    assert.deepEqual(listed.tools.map((t) => t.name), ["get_weather"], "tool names");
    assert.equal(listed.nextCursor, undefined, "nextCursor");
    // The tool as it came over the wire, before the SDK's own parsing.
    const wireTool = transport.responseTo("tools/list").result.tools[0];
    assert.deepEqual(wireTool.inputSchema, INPUT_SCHEMA, "inputSchema on the wire");
    assert.deepEqual(wireTool.outputSchema, OUTPUT_SCHEMA, "outputSchema on the wire");
    assert.deepEqual(
      wireTool.annotations,
      { title: "Current weather", readOnlyHint: true, openWorldHint: false },
      "annotations on the wire",
    );
    const tool = listed.tools[0];
    assert.equal(tool.description, "Get the current weather for a city.", "description");
    assert.deepEqual(tool.inputSchema, INPUT_SCHEMA, "inputSchema as parsed by the SDK");
    assert.deepEqual(tool.outputSchema, OUTPUT_SCHEMA, "outputSchema as parsed by the SDK");
    ok("tools/list");

    // The SDK validates structuredContent against the listed outputSchema (with ajv) here.
    const result = await client.callTool({ name: "get_weather", arguments: { city: "Oslo" } });
    assert.notEqual(result.isError, true, `get_weather Oslo failed: ${JSON.stringify(result)}`);
    assert.equal(onlyText(result, "get_weather Oslo"), OSLO_TEXT, "get_weather Oslo text");
    assert.deepEqual(result.structuredContent, OSLO, "get_weather Oslo structuredContent");
    ok("tools/call get_weather Oslo");

    const unknownCity = await toolError(client, { city: "Atlantis" }, "unknown city");
    assert.ok(unknownCity.startsWith("No weather data for `Atlantis`"), unknownCity);
    ok("unknown city is a tool error");

    for (const [args, why] of [
      [{ city: 42 }, "wrong type"],
      [{}, "missing required argument"],
      [{ city: "Oslo", units: "F" }, "extra argument"],
    ]) {
      const text = await toolError(client, args, why);
      assert.ok(text.startsWith("Invalid arguments for tool `get_weather`"), `${why}: ${text}`);
      ok(`${why} is a tool error`);
    }

    // An unknown tool is a protocol error, which the SDK raises as McpError.
    await assert.rejects(
      client.callTool({ name: "get_forecast", arguments: { city: "Oslo" } }),
      (error) => {
        assert.ok(error instanceof McpError, `not an McpError: ${error}`);
        assert.equal(error.code, -32602, "unknown tool error code");
        assert.equal(error.message, "MCP error -32602: Unknown tool: get_forecast");
        return true;
      },
    );
    ok("unknown tool is JSON-RPC -32602");
  } finally {
    await client.close();
  }
}

if (process.argv.length < 3) {
  console.error("usage: node client.mjs SERVER_COMMAND [ARG...]");
  process.exit(2);
}
await runChecks(() => run(process.argv[2], process.argv.slice(3)));
