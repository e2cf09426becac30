// What the SDK test servers here share: the SDK version they report, their tools' text
// results, the contact form their `ask_user` tools request, and the tools of the tools server
// (greet, add, fail), which server.mjs serves on stdio and http_server.mjs over HTTP.

import { readFileSync } from "node:fs";

import { z } from "zod";

// The SDK's own version goes into serverInfo, so the Rust test can tell the pinned release is
// the one running.
const sdkPackage = JSON.parse(
  readFileSync(
    new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
    "utf8",
  ),
);
export const SDK_VERSION = `sdk-${sdkPackage.version}`;

export const text = (value) => ({ content: [{ type: "text", text: value }] });

export const CONTACT_SCHEMA = {
  type: "object",
  properties: {
    username: { type: "string", description: "Your user name" },
    email: { type: "string", description: "Your email address" },
  },
  required: ["username", "email"],
};

/**
 * The tools every tools server has: a plain text result, a structured result with an output
 * schema, a tool that fails (isError), and argument validation done by the SDK (zod) itself.
 */
export function registerTools(server) {
  server.registerTool(
    "greet",
    { description: "Greet someone by name.", inputSchema: { name: z.string() } },
    async ({ name }) => text(`Hello, ${name}!`),
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
}
