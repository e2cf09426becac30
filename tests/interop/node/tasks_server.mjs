// An MCP server whose tools run as tasks, built with the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.x `McpServer` and its experimental tasks API:
// `server.experimental.tasks.registerToolTask`, `InMemoryTaskStore`,
// `InMemoryTaskMessageQueue`), for oxmcp's client to drive.
//
// Usage: node tasks_server.mjs              (stdio)
//        node tasks_server.mjs http PORT    (Streamable HTTP with sessions, 127.0.0.1, /mcp)
//
// The SDK speaks 2025-11-25, where tasks are experimental: the client asks for a task with
// `params.task = {ttl}` and gets a CreateTaskResult (`{task}`) at once; it then polls
// `tasks/get`, fetches the outcome with the blocking `tasks/result`, and may use `tasks/list`
// and `tasks/cancel`. The SDK answers all four from the task store; the tools below only
// create their task and store its outcome when their work is done. Tools:
//
// - `ts_slow {seconds}` (taskSupport "optional"): `slow done after {seconds}` once `seconds`
//   have passed; called without `params.task`, the SDK runs the task itself and answers the
//   call when it is done;
// - `ts_required {}` (taskSupport "required"): `required done` after about 200 ms;
// - `ts_fail {}` (taskSupport "optional"): a task whose result is a tool error (isError,
//   `ts_fail failed`), so its status is `failed`, as 2025-11-25 asks;
// - `greet {name}`: a plain tool (no `execution`), `Hello, {name}!`.
//
// `tasks/cancel` marks the task `cancelled` in the store (the SDK does that); the store below
// also stops the task's work then, so nothing overwrites that status. Over stdio only protocol
// goes to stdout; over HTTP the server prints `listening on http://127.0.0.1:PORT/mcp` on
// stderr once it listens (PORT 0 lets the OS choose) and runs until killed. One task store
// serves every HTTP session; the SDK keeps each session's tasks to that session.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

import { SDK_VERSION, text } from "./servers.mjs";

/** How often clients are told to poll (ms); the SDK's blocking tasks/result polls as often. */
const POLL_INTERVAL = 100;

/** The SDK's in-memory store, which also stops a task's work when the task is cancelled. */
class CancellableTaskStore extends InMemoryTaskStore {
  constructor() {
    super();
    this.running = new Map();
  }

  /** An AbortSignal that fires when the task is cancelled. */
  watch(taskId) {
    const controller = new AbortController();
    this.running.set(taskId, controller);
    return controller.signal;
  }

  done(taskId) {
    this.running.delete(taskId);
  }

  async updateTaskStatus(taskId, status, statusMessage, sessionId) {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === "cancelled") {
      this.running.get(taskId)?.abort();
      this.done(taskId);
    }
  }
}

const store = new CancellableTaskStore();
const queue = new InMemoryTaskMessageQueue();

/**
 * The task side of a tool: creates the task with the TTL the client asked for, runs `work` in
 * the background and stores its outcome (`failed` when the result is a tool error). `work`
 * gets the tool's arguments and an AbortSignal that fires on tasks/cancel.
 */
function taskHandler(work, { hasArgs }) {
  const createTask = async (args, extra) => {
    const task = await extra.taskStore.createTask({
      ttl: extra.taskRequestedTtl,
      pollInterval: POLL_INTERVAL,
    });
    const signal = store.watch(task.taskId);
    (async () => {
      let result;
      try {
        result = await work(args, signal);
      } catch (error) {
        if (signal.aborted) return;
        result = { ...text(`error: ${error?.message ?? error}`), isError: true };
      }
      if (signal.aborted) return;
      store.done(task.taskId);
      await extra.taskStore.storeTaskResult(
        task.taskId,
        result.isError ? "failed" : "completed",
        result,
      );
    })().catch((error) => console.error(`task ${task.taskId}: ${error?.message ?? error}`));
    return { task };
  };
  const byId = {
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  };
  if (hasArgs) {
    return { createTask, ...byId };
  }
  // A tool without an input schema: the SDK calls its handlers with `extra` alone.
  return {
    createTask: (extra) => createTask(undefined, extra),
    getTask: (extra) => byId.getTask(undefined, extra),
    getTaskResult: (extra) => byId.getTaskResult(undefined, extra),
  };
}

function buildServer() {
  const server = new McpServer(
    { name: "ts-tasks-server", version: SDK_VERSION },
    {
      instructions: "Tasks test server for oxmcp interop.",
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
      taskMessageQueue: queue,
    },
  );

  server.registerTool(
    "greet",
    { description: "Greet someone by name (never a task).", inputSchema: { name: z.string() } },
    async ({ name }) => text(`Hello, ${name}!`),
  );

  server.experimental.tasks.registerToolTask(
    "ts_slow",
    {
      description: "Waits `seconds`, then says so (a task when the client asks for one).",
      inputSchema: { seconds: z.number().min(0) },
      execution: { taskSupport: "optional" },
    },
    taskHandler(
      async ({ seconds }, signal) => {
        await sleep(seconds * 1000, undefined, { signal });
        return text(`slow done after ${seconds}`);
      },
      { hasArgs: true },
    ),
  );

  server.experimental.tasks.registerToolTask(
    "ts_required",
    {
      description: "Finishes after about 200 ms; only ever runs as a task.",
      execution: { taskSupport: "required" },
    },
    taskHandler(
      async (_args, signal) => {
        await sleep(200, undefined, { signal });
        return text("required done");
      },
      { hasArgs: false },
    ),
  );

  server.experimental.tasks.registerToolTask(
    "ts_fail",
    {
      description: "A task whose result is a tool error.",
      execution: { taskSupport: "optional" },
    },
    taskHandler(
      async (_args, signal) => {
        await sleep(100, undefined, { signal });
        return { ...text("ts_fail failed"), isError: true };
      },
      { hasArgs: false },
    ),
  );

  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function rpcError(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Streamable HTTP with sessions: one transport and one McpServer per session. */
function serveHttp(port) {
  const sessions = new Map();
  const handle = async (req, res) => {
    let body;
    if (req.method === "POST") {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        rpcError(res, 400, -32700, "Parse error");
        return;
      }
    }
    const id = req.headers["mcp-session-id"];
    if (id !== undefined) {
      const transport = sessions.get(id);
      if (transport === undefined) {
        rpcError(res, 404, -32001, "Session not found");
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === "POST" && isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildServer().connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    rpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
  };
  const http = createServer((req, res) => {
    if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    handle(req, res).catch((e) => {
      console.error(`request failed: ${e?.stack ?? e}`);
      if (!res.headersSent) rpcError(res, 500, -32603, "Internal server error");
    });
  });
  http.listen(port, "127.0.0.1", () => {
    console.error(`listening on http://127.0.0.1:${http.address().port}/mcp`);
  });
}

const [mode, port] = process.argv.slice(2);
if (mode === undefined) {
  await buildServer().connect(new StdioServerTransport());
} else if (mode === "http" && port !== undefined && Number.isInteger(Number(port))) {
  serveHttp(Number(port));
} else {
  console.error("usage: node tasks_server.mjs [http PORT]");
  process.exit(2);
}
