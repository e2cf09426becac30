// What the SDK client scripts here share: a transport wrapper that records the wire, the
// client application's handlers (sampling, elicitation, logging), the `ok:` lines, and the
// ending every script has: `all checks passed`, or exit 1 with a MISMATCH line on stderr at
// the first difference (core/tests/interop reads both).

import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";

import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

/** The message of the conformance fixture's SEP-1034 form (`test_elicitation_sep1034_defaults`). */
export const DEFAULTS_MESSAGE = "Please review and update the form fields with defaults";

/** Wraps a transport and keeps every JSON-RPC message that crosses it. */
export class RecordingTransport {
  constructor(inner) {
    this.inner = inner;
    this.sent = [];
    this.received = [];
    // The Client installs its callbacks on us after construction; look them up per call.
    inner.onmessage = (message, extra) => {
      this.received.push(message);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  async start() {
    await this.inner.start();
  }

  async send(message, options) {
    this.sent.push(message);
    await this.inner.send(message, options);
  }

  async close() {
    await this.inner.close();
  }

  /** The response the server sent to our latest request with this method. */
  responseTo(method) {
    const request = this.sent.findLast((m) => m.method === method && m.id !== undefined);
    assert.ok(request, `no ${method} request was sent`);
    const response = this.received.find((m) => m.id === request.id && m.method === undefined);
    assert.ok(response, `no response to ${method} (id ${request.id})`);
    return response;
  }

  /** The methods of the requests the server sent us. */
  serverRequests() {
    return this.received.filter((m) => m.method && m.id !== undefined).map((m) => m.method);
  }

  /** Our answer to the server's latest request with this method. */
  answerTo(method) {
    const request = this.received.findLast((m) => m.method === method && m.id !== undefined);
    assert.ok(request, `the server sent no ${method} request`);
    const answer = this.sent.find((m) => m.id === request.id && m.method === undefined);
    assert.ok(answer, `no answer to ${method}`);
    return answer;
  }
}

export function ok(step) {
  console.log(`ok: ${step}`);
}

export function onlyText(result, what) {
  assert.equal(result.content.length, 1, `${what}: number of content blocks`);
  assert.equal(result.content[0].type, "text", `${what}: content type`);
  return result.content[0].text;
}

/** The client application: what its handlers were asked and how they answer. */
export class Host {
  constructor() {
    this.asked = [];
    this.logs = [];
    this.refuseSampling = false;
  }

  install(client) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      this.asked.push(["sampling", request.params]);
      if (this.refuseSampling) {
        throw new McpError(-1, "User rejected sampling");
      }
      const content = request.params.messages[0].content;
      return {
        role: "assistant",
        content: { type: "text", text: `echo: ${content.text}` },
        model: "typescript-sdk-model",
        stopReason: "endTurn",
      };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params;
      this.asked.push(["elicitation", params]);
      if (params.message.startsWith("decline")) {
        return { action: "decline" };
      }
      if (params.message.startsWith("sloppy")) {
        return { action: "accept", content: { username: 42, email: ["a"] } };
      }
      if (params.message === DEFAULTS_MESSAGE) {
        // SEP-1034: the user changed one field; the SDK (applyDefaults) fills in the rest.
        return { action: "accept", content: { name: "Ada" } };
      }
      return { action: "accept", content: { username: "ada", email: "ada@example.com" } };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      this.logs.push(notification.params);
    });
  }

  async waitForLogs(count) {
    // A guard against a hang, not a timed assertion.
    for (let i = 0; i < 1000 && this.logs.length < count; i++) {
      await sleep(10);
    }
    const logs = this.logs;
    this.logs = [];
    return logs;
  }

  takeAsked() {
    const asked = this.asked;
    this.asked = [];
    return asked;
  }
}

/** Runs the checks, then ends the script as the Rust side expects. */
export async function runChecks(checks) {
  try {
    await checks();
    console.log("all checks passed");
  } catch (error) {
    console.error(`MISMATCH: ${error.message}`);
    if (!(error instanceof assert.AssertionError)) {
      console.error(error.stack);
    }
    process.exit(1);
  }
}
