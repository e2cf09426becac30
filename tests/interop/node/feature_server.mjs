// The whole MCP feature surface served by the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.x `McpServer`), over stdio.
//
// core/tests/interop starts this script and drives it with oxmcp's
// client. The SDK speaks the handshake era only (up to 2025-11-25), so every question the
// server asks the client is a server-to-client request. It serves:
//
// - resources (registerResource): a text one, a binary one (a PNG as a base64 blob), one
//   clients may subscribe to, and the template `test://template/{id}/data`, whose `id`
//   variable completes;
// - prompts (registerPrompt): one without arguments, `greeting` with a required `name`
//   (completable) and an optional `style`, one that embeds a resource, one with an image;
// - `resources/subscribe` / `resources/unsubscribe` and the `touch` tool, which sends
//   `notifications/resources/updated` to subscribers;
// - `logging/setLevel` (the `logging` capability) and `log_messages`, which logs at four
//   levels through `sendLoggingMessage` (the SDK drops what is below the level set);
// - tools that ask the client: `ask_model` (createMessage), `ask_user` and
//   `ask_with_defaults` (elicitInput; the SDK validates the answer against the schema) and
//   `list_client_roots` (listRoots). Each echoes what the client answered.

import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

import { CONTACT_SCHEMA, SDK_VERSION, text } from "./servers.mjs";

// A 1x1 red PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const NAMES = ["Ada", "Alan", "Alonzo", "Grace"];
const IDS = ["1", "2", "3", "42", "123"];

const server = new McpServer(
  { name: "typescript-features", version: SDK_VERSION },
  {
    instructions: "Feature server for oxmcp interop.",
    capabilities: { logging: {}, resources: { subscribe: true } },
  },
);

// --- Resources ------------------------------------------------------------------------------

server.registerResource(
  "static-text",
  "test://static-text",
  { description: "A static text resource", mimeType: "text/plain" },
  async (uri) => ({
    contents: [
      { uri: uri.href, mimeType: "text/plain", text: "Static text from the TypeScript SDK." },
    ],
  }),
);

server.registerResource(
  "static-binary",
  "test://static-binary",
  { description: "A static binary resource (a PNG)", mimeType: "image/png" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }] }),
);

server.registerResource(
  "watched",
  "test://watched",
  { description: "A resource clients may subscribe to", mimeType: "text/plain" },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }],
  }),
);

server.registerResource(
  "template",
  new ResourceTemplate("test://template/{id}/data", {
    list: undefined,
    complete: { id: (value) => IDS.filter((id) => id.startsWith(value)) },
  }),
  { description: "A templated resource", mimeType: "application/json" },
  async (uri, { id }) => ({
    contents: [
      {
        uri: uri.href,
        mimeType: "application/json",
        text: JSON.stringify({ id, source: "typescript" }),
      },
    ],
  }),
);

// Handshake-era subscriptions: one client per process.
const subscribed = new Set();
server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
  subscribed.add(request.params.uri);
  return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
  subscribed.delete(request.params.uri);
  return {};
});

server.registerTool(
  "touch",
  {
    description: "Marks a resource as changed and tells whoever subscribed to it.",
    inputSchema: { uri: z.string() },
  },
  async ({ uri }) => {
    let sent = 0;
    if (subscribed.has(uri)) {
      await server.server.sendResourceUpdated({ uri });
      sent = 1;
    }
    return text(`touched ${uri}, ${sent} subscription notice(s) sent`);
  },
);

// --- Logging --------------------------------------------------------------------------------

server.registerTool(
  "log_messages",
  { description: "Logs one message at each of debug, info, warning and error." },
  async () => {
    for (const level of ["debug", "info", "warning", "error"]) {
      await server.sendLoggingMessage({
        level,
        logger: "typescript-features",
        data: `${level} message`,
      });
    }
    return text("logged");
  },
);

// --- Prompts --------------------------------------------------------------------------------

const user = (content) => ({ role: "user", content });

server.registerPrompt(
  "simple_prompt",
  { description: "A prompt without arguments" },
  () => ({
    messages: [user({ type: "text", text: "A simple prompt from the TypeScript SDK." })],
  }),
);

server.registerPrompt(
  "greeting",
  {
    description: "A greeting with a required name and an optional style",
    argsSchema: {
      name: completable(z.string(), (value) =>
        NAMES.filter((n) => n.toLowerCase().startsWith(value.toLowerCase())),
      ),
      style: z.string().optional(),
    },
  },
  ({ name, style }) => ({
    messages: [
      user({ type: "text", text: `Write a ${style ?? "friendly"} greeting for ${name}.` }),
    ],
  }),
);

server.registerPrompt(
  "embedded_resource",
  { description: "A prompt that embeds a resource", argsSchema: { resourceUri: z.string() } },
  ({ resourceUri }) => ({
    messages: [
      user({
        type: "resource",
        resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource text." },
      }),
      user({ type: "text", text: "Please summarise the resource above." }),
    ],
  }),
);

server.registerPrompt("image_prompt", { description: "A prompt with an image" }, () => ({
  messages: [
    user({ type: "image", data: PNG, mimeType: "image/png" }),
    user({ type: "text", text: "Describe the image above." }),
  ],
}));

// --- Tools that ask the client --------------------------------------------------------------

server.registerTool(
  "ask_model",
  {
    description: "Asks the client's model (sampling/createMessage) and echoes its answer.",
    inputSchema: { prompt: z.string() },
  },
  async ({ prompt }) => {
    const answer = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: prompt } }],
      systemPrompt: "Answer briefly.",
      maxTokens: 64,
    });
    const said = answer.content.type === "text" ? answer.content.text : answer.content;
    return text(
      `model ${answer.model} said ${JSON.stringify(said)} (stopReason ${answer.stopReason})`,
    );
  },
);

server.registerTool(
  "ask_user",
  {
    description: "Asks the user (elicitation/create, form mode) and echoes the answer.",
    inputSchema: { message: z.string() },
  },
  async ({ message }) => {
    const answer = await server.server.elicitInput({ message, requestedSchema: CONTACT_SCHEMA });
    if (answer.action === "accept") {
      return text(`accept: ${JSON.stringify(answer.content)}`);
    }
    return text(answer.action);
  },
);

// SEP-1034: a default for each primitive type. The SDK does not fill them in on this side;
// the echo shows what the client sent.
const DEFAULTS_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", default: "John Doe" },
    age: { type: "integer", default: 30 },
    score: { type: "number", default: 95.5 },
    status: { type: "string", enum: ["active", "inactive"], default: "active" },
    verified: { type: "boolean", default: true },
  },
};

server.registerTool(
  "ask_with_defaults",
  { description: "Elicits a form whose fields all have defaults; echoes the raw answer." },
  async () => {
    const answer = await server.server.elicitInput({
      message: "Review the defaults",
      requestedSchema: DEFAULTS_SCHEMA,
    });
    return text(`request: action=${answer.action}, content=${JSON.stringify(answer.content)}`);
  },
);

server.registerTool(
  "list_client_roots",
  { description: "Asks the client for its roots (roots/list) and echoes them." },
  async () => {
    const { roots } = await server.server.listRoots();
    return text(JSON.stringify(roots.map((r) => ({ uri: r.uri, name: r.name ?? null }))));
  },
);

await server.connect(new StdioServerTransport());
