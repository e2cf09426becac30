// Drives the tasks tools of oxmcp's conformance server with the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.x `Client` and its experimental tasks API,
// `client.experimental.tasks`), over stdio or Streamable HTTP.
//
// Usage: node tasks_client.mjs stdio SERVER_COMMAND [ARG...]
//        node tasks_client.mjs http URL
//
// The server is examples/rust/conformance_server.rs (core/tests/interop runs it) or the Node
// fixture examples/node/conformance_server.mjs (bindings-node/test/tasks.test.mjs); their
// tasks tools are those of examples/rust/conformance/tasks.rs. The SDK speaks 2025-11-25, the revision where tasks are
// experimental: a task is asked for with `params.task`, the answer is a CreateTaskResult
// (`{task}`), and the SDK's `callToolStream` then polls `tasks/get` until the task is
// terminal (or `input_required`) and fetches the outcome with the blocking `tasks/result`.
// Covered: `execution.taskSupport` in tools/list, a task that completes, a task whose tool
// result is an error (status `failed`, which the SDK reports as an error, while `tasks/result`
// still answers the isError result), a task that ends in a JSON-RPC error, tasks that ask the
// client (one elicitation, two at once; they come as ordinary `elicitation/create` requests
// tagged with the `related-task` `_meta` key), `tasks/cancel` (and cancelling twice),
// `tasks/list`, an unknown task id, and a plain call of a tool that requires a task.
//
// Every frame is recorded on its way in and out, so the checks look at the wire as well as at
// the SDK's parsed results. The script exits non-zero with a MISMATCH line on stderr at the
// first difference; core/tests/interop runs it.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";

import { RecordingTransport, ok, onlyText, runChecks } from "./checks.mjs";

const PINNED_SDK = "1.32.2";
const TASK_ID = /^[A-Za-z0-9_-]{22}$/;
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
const ELICIT_ANSWER = { confirm: true, name: "ts" };

/** A RecordingTransport that also passes on what the Client asks of an HTTP transport. */
class Recording extends RecordingTransport {
  get sessionId() {
    return this.inner.sessionId;
  }

  setProtocolVersion(version) {
    this.inner.setProtocolVersion?.(version);
  }

  /** The `tasks/result` requests for this task still waiting for their response. */
  pendingResults(taskId) {
    return this.sent.filter(
      (m) =>
        m.method === "tasks/result" &&
        m.params?.taskId === taskId &&
        !this.received.some((r) => r.id === m.id && r.method === undefined),
    );
  }

  /** The response to the latest request with this method and these params' taskId. */
  responseFor(method, taskId) {
    const request = this.sent.findLast((m) => m.method === method && m.params?.taskId === taskId);
    assert.ok(request, `no ${method} request for task ${taskId}`);
    const response = this.received.find((m) => m.id === request.id && m.method === undefined);
    assert.ok(response, `no response to ${method} for task ${taskId}`);
    return response;
  }
}

/** The client application's elicitation handler: accepts every form, and keeps what it saw. */
class Asker {
  constructor(transport) {
    this.transport = transport;
    this.asked = [];
  }

  install(client) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const related = request.params._meta?.[RELATED_TASK_META_KEY];
      this.asked.push({
        message: request.params.message,
        requestedSchema: request.params.requestedSchema,
        related,
        // Whether a tasks/result for its task was waiting when the question came.
        duringResult: related ? this.transport.pendingResults(related.taskId).length > 0 : false,
      });
      return { action: "accept", content: { ...ELICIT_ANSWER } };
    });
  }

  take() {
    const asked = this.asked;
    this.asked = [];
    return asked;
  }
}

/** Runs callToolStream to its end and returns what it yielded. */
async function stream(client, name, args, task) {
  const options = task === undefined ? undefined : { task };
  const messages = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    options,
  )) {
    messages.push(message);
  }
  return messages;
}

/** Checks the shape every task stream has and returns [created task, statuses, last message]. */
function taskStream(messages, what) {
  const kinds = messages.map((m) => m.type);
  assert.ok(messages.length >= 3, `${what}: stream too short: ${kinds.join(", ")}`);
  assert.equal(kinds[0], "taskCreated", `${what}: first message (${kinds.join(", ")})`);
  const last = messages.at(-1);
  const statuses = messages.slice(1, -1);
  assert.ok(
    statuses.every((m) => m.type === "taskStatus"),
    `${what}: between taskCreated and the end: ${kinds.join(", ")}`,
  );
  assert.ok(statuses.length >= 1, `${what}: no taskStatus (${kinds.join(", ")})`);
  const { task } = messages[0];
  assert.match(task.taskId, TASK_ID, `${what}: taskId`);
  for (const { task: seen } of statuses) {
    assert.equal(seen.taskId, task.taskId, `${what}: taskId of a status`);
  }
  return [task, statuses.map((m) => m.task), last];
}

async function expectError(promise, code, what) {
  let caught;
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof McpError, `${what}: not an McpError: ${error}`);
    assert.equal(error.code, code, `${what}: code (${error.message})`);
    caught = error;
    return true;
  });
  return caught;
}

async function checkTools(client) {
  assert.deepEqual(client.getServerCapabilities().tasks, TASKS_CAPABILITY, "tasks capability");
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ["greet", "slow_compute", "failing_job", "protocol_error_job"]) {
    assert.ok(byName[name], `tools/list lacks ${name}`);
  }
  assert.deepEqual(byName.slow_compute.execution, { taskSupport: "optional" }, "slow_compute");
  assert.deepEqual(byName.failing_job.execution, { taskSupport: "required" }, "failing_job");
  assert.deepEqual(
    byName.protocol_error_job.execution,
    { taskSupport: "optional" },
    "protocol_error_job",
  );
  assert.equal(byName.greet.execution, undefined, "greet's execution");
  ok("tools/list: execution.taskSupport optional, required, absent");
}

async function checkCompleted(client, transport, created) {
  const messages = await stream(client, "slow_compute", { seconds: 0.3, label: "ts" }, {
    ttl: 60000,
  });
  const [task, statuses, last] = taskStream(messages, "slow_compute");
  created.push(task.taskId);
  const request = transport.sent.find((m) => m.method === "tools/call");
  assert.deepEqual(request.params.task, { ttl: 60000 }, "params.task on the wire");
  assert.equal(task.status, "working", "created task's status");
  assert.equal(task.ttl, 60000, "created task's ttl");
  assert.equal(typeof task.pollInterval, "number", "created task's pollInterval");
  assert.ok(!Number.isNaN(Date.parse(task.createdAt)), `createdAt: ${task.createdAt}`);
  assert.equal(statuses.at(-1).status, "completed", "last status");
  assert.equal(last.type, "result", `slow_compute ended with ${last.type}: ${last.error}`);
  assert.notEqual(last.result.isError, true, "slow_compute isError");
  assert.equal(onlyText(last.result, "slow_compute"), "ts: computed after 0.3 s");
  // tasks/result answers the call's own result, tagged with its task.
  assert.deepEqual(
    transport.responseFor("tasks/result", task.taskId).result._meta?.[RELATED_TASK_META_KEY],
    { taskId: task.taskId },
    "related-task _meta of the tasks/result response",
  );
  ok("slow_compute as a task: taskCreated, taskStatus, result");
}

async function checkFailed(client, created) {
  const messages = await stream(client, "failing_job", {});
  const [task, statuses, last] = taskStream(messages, "failing_job");
  created.push(task.taskId);
  assert.equal(statuses.at(-1).status, "failed", "failing_job's last status");
  assert.equal(last.type, "error", `failing_job ended with ${last.type}`);
  assert.ok(last.error instanceof McpError, `failing_job: ${last.error}`);
  const got = await client.experimental.tasks.getTask(task.taskId);
  assert.equal(got.status, "failed", "tasks/get of the failed task");
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.equal(result.isError, true, "the failed task's result: isError");
  const text = onlyText(result, "failing_job result");
  assert.ok(text.includes("the job failed"), `failing_job text: ${text}`);
  ok("failing_job: status failed, the SDK reports an error, tasks/result has the isError result");

  const broke = await stream(client, "protocol_error_job", {});
  const [brokeTask, brokeStatuses, brokeLast] = taskStream(broke, "protocol_error_job");
  created.push(brokeTask.taskId);
  assert.equal(brokeStatuses.at(-1).status, "failed", "protocol_error_job's last status");
  assert.equal(brokeLast.type, "error", `protocol_error_job ended with ${brokeLast.type}`);
  const error = await expectError(
    client.experimental.tasks.getTaskResult(brokeTask.taskId, CallToolResultSchema),
    -32603,
    "tasks/result of protocol_error_job",
  );
  assert.ok(error.message.includes("the job broke"), `protocol_error_job: ${error.message}`);
  ok("protocol_error_job: status failed, tasks/result answers JSON-RPC -32603");
}

async function checkElicitation(client, asker, created) {
  const messages = await stream(client, "confirm_delete", { filename: "ts.txt" });
  const [task, , last] = taskStream(messages, "confirm_delete");
  created.push(task.taskId);
  assert.equal(last.type, "result", `confirm_delete ended with ${last.type}: ${last.error}`);
  assert.equal(onlyText(last.result, "confirm_delete"), "Deleted ts.txt");
  const asked = asker.take();
  assert.equal(asked.length, 1, `confirm_delete asked ${asked.length} questions`);
  assert.equal(asked[0].message, "Delete ts.txt?", "confirm_delete's question");
  assert.deepEqual(
    asked[0].requestedSchema.properties,
    { confirm: { type: "boolean" } },
    "confirm_delete's form",
  );
  assert.deepEqual(asked[0].related, { taskId: task.taskId }, "related-task _meta");
  // Not a check: the fixture asks at once, before the SDK's first tasks/result, so the question
  // usually travels outside one (on stdio, or on the HTTP GET stream).
  console.error(
    `note: confirm_delete's question came during a tasks/result: ${asked[0].duringResult}`,
  );
  ok("confirm_delete: the elicitation is tagged with the task, the task completes");

  const multi = await stream(client, "multi_input", {});
  const [multiTask, , multiLast] = taskStream(multi, "multi_input");
  created.push(multiTask.taskId);
  assert.equal(multiLast.type, "result", `multi_input ended with ${multiLast.type}`);
  assert.equal(onlyText(multiLast.result, "multi_input"), 'name: "ts", confirm: true');
  const both = asker.take();
  assert.deepEqual(
    both.map((q) => q.message).sort(),
    ["Go ahead?", "Your name?"],
    "multi_input's questions",
  );
  for (const question of both) {
    assert.deepEqual(question.related, { taskId: multiTask.taskId }, "related-task _meta");
  }
  console.error(
    `note: multi_input's questions came during a tasks/result: ${both.map((q) => q.duringResult)}`,
  );
  ok("multi_input: two elicitations at once, both answered");
}

async function checkCancel(client, created) {
  const tasks = client.experimental.tasks;
  let cancelled;
  const messages = [];
  for await (const message of tasks.callToolStream(
    { name: "slow_compute", arguments: { seconds: 60 } },
    CallToolResultSchema,
  )) {
    messages.push(message);
    if (message.type === "taskCreated") {
      created.push(message.task.taskId);
      cancelled = await tasks.cancelTask(message.task.taskId);
    }
  }
  const [task, , last] = taskStream(messages, "cancelled slow_compute");
  assert.equal(cancelled.taskId, task.taskId, "tasks/cancel's taskId");
  assert.equal(cancelled.status, "cancelled", "tasks/cancel's status");
  assert.equal(last.type, "error", `a cancelled task's stream ended with ${last.type}`);
  assert.equal((await tasks.getTask(task.taskId)).status, "cancelled", "tasks/get after cancel");
  await expectError(tasks.cancelTask(task.taskId), -32602, "cancelling a cancelled task");
  // The first task of the run (slow_compute, 0.3 s) completed long ago.
  await expectError(tasks.cancelTask(created[0]), -32602, "cancelling a completed task");
  ok("tasks/cancel: status cancelled; cancelling a finished task is JSON-RPC -32602");
}

async function checkListAndUnknown(client, created) {
  const seen = [];
  let cursor;
  do {
    const page = await client.experimental.tasks.listTasks(cursor);
    seen.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const ids = seen.map((t) => t.taskId);
  for (const id of created) {
    assert.ok(ids.includes(id), `tasks/list lacks ${id}: ${ids.join(", ")}`);
  }
  ok(`tasks/list lists the ${created.length} tasks created`);

  await expectError(client.experimental.tasks.getTask("nope"), -32602, "tasks/get of nope");
  ok("tasks/get of an unknown task is JSON-RPC -32602");
}

async function checkRequired(client) {
  // The SDK refuses on its own once tools/list said the tool requires a task...
  await assert.rejects(client.callTool({ name: "failing_job", arguments: {} }), McpError);
  // ...so send the plain call by hand to see what the server says.
  await expectError(
    client.request(
      { method: "tools/call", params: { name: "failing_job", arguments: {} } },
      CallToolResultSchema,
    ),
    -32601,
    "a plain call of failing_job",
  );
  ok("a plain call of a task-required tool is refused (SDK, and the server with -32601)");
}

async function run(kind, target) {
  const sdkPackage = JSON.parse(
    readFileSync(
      new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url),
      "utf8",
    ),
  );
  assert.equal(sdkPackage.version, PINNED_SDK, "installed SDK version");

  const inner =
    kind === "stdio"
      ? new StdioClientTransport({
          command: target[0],
          args: target.slice(1),
          env: { ...process.env, RUST_LOG: "warn" },
        })
      : new StreamableHTTPClientTransport(new URL(target[0]));
  const transport = new Recording(inner);
  const client = new Client(
    { name: "typescript-interop-tasks-client", version: PINNED_SDK },
    { capabilities: { elicitation: {} } },
  );
  const asker = new Asker(transport);
  asker.install(client);
  await client.connect(transport);
  try {
    const init = transport.responseTo("initialize");
    assert.equal(init.result.protocolVersion, "2025-11-25", "negotiated protocol version");
    ok(`connected on ${init.result.protocolVersion} over ${kind}`);

    const created = [];
    await checkTools(client);
    await checkCompleted(client, transport, created);
    await checkFailed(client, created);
    await checkElicitation(client, asker, created);
    await checkCancel(client, created);
    await checkListAndUnknown(client, created);
    await checkRequired(client);
    assert.deepEqual(asker.take(), [], "unexpected questions");
  } finally {
    if (kind === "http") {
      await inner.terminateSession();
    }
    await client.close();
  }
}

const [kind, ...target] = process.argv.slice(2);
const usable = kind === "stdio" ? target.length >= 1 : kind === "http" && target.length === 1;
if (!usable) {
  console.error("usage: node tasks_client.mjs stdio SERVER_COMMAND [ARG...] | http URL");
  process.exit(2);
}
await runChecks(() => run(kind, target));
