#!/usr/bin/env node
// The official TypeScript MCP client (@modelcontextprotocol/client, v2) against dual-response instances
// behind a round-robin load balancer (issue 25): every request opens a connection of its own, so
// consecutive requests reach different instances.
//
//   node interop.mjs --url http://127.0.0.1:PORT/mcp --version 2026-07-28|2025-11-25
//
// 2026-07-28: the client pins the version (no session, `_meta` on every request); 2025-11-25: the
// plain `initialize` handshake, whose session every instance restores from the shared store.
// Checks, each printed PASS or FAIL with its time: tools, a tool call and its resource read,
// resources/list, prompts, a task started on one instance and followed and cancelled on others,
// and subscriptions (2026-07-28: `subscriptions/listen` told of a delete made over REST on any
// instance; 2025-11-25: subscribe and unsubscribe acknowledged). The last line is a JSON summary;
// the exit code is 1 when a check failed, 2 when the run could not proceed.
//
// `cargo test -p dual-response-server --features services,browser --test across_instances` starts the instances
// and the balancer and runs this; `bash .ci/browser` installs the npm packages.

import http from "node:http";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { z } from "zod";

const { values: opt } = parseArgs({
  options: {
    url: { type: "string" },
    version: { type: "string", default: "2026-07-28" },
  },
});
if (!opt.url) {
  console.error("usage: node interop.mjs --url http://127.0.0.1:PORT/mcp --version 2026-07-28|2025-11-25");
  process.exit(2);
}
const MODERN = opt.version >= "2026-07-28";
/** Every wait is bounded: a loaded 2-core machine runs the debug build of the demo. */
const LIMIT_MS = 60_000;
const TASKS = "io.modelcontextprotocol/tasks";
/** A query that runs for seconds: long enough to follow and to cancel. */
const slowSql = (n) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) SELECT i FROM n`;
const AnyResult = z.looseObject({});

/**
 * `fetch` over a new TCP connection for every request (`Connection: close`, no agent): the
 * balancer then sends each request to the next instance. Node's global fetch keeps connections
 * alive and forbids the `Connection` header.
 */
function freshConnectionFetch(url, init = {}) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const headers = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    headers.connection = "close";
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: init.method ?? "GET",
        headers,
        agent: false,
      },
      (response) => {
        const replyHeaders = new Headers();
        for (const [key, value] of Object.entries(response.headers)) {
          for (const one of Array.isArray(value) ? value : [value]) {
            if (one !== undefined) replyHeaders.append(key, one);
          }
        }
        const empty = response.statusCode === 204 || response.statusCode === 304;
        resolve(
          new Response(empty ? null : Readable.toWeb(response), {
            status: response.statusCode,
            statusText: response.statusMessage,
            headers: replyHeaders,
          }),
        );
      },
    );
    request.on("error", reject);
    const abort = () => request.destroy(new DOMException("aborted", "AbortError"));
    if (init.signal?.aborted) abort();
    init.signal?.addEventListener("abort", abort, { once: true });
    request.on("close", () => init.signal?.removeEventListener("abort", abort));
    request.end(init.body === undefined || init.body === null ? undefined : init.body);
  });
}

async function connect(name, capabilities = {}) {
  const client = new Client(
    { name, version: "0" },
    {
      capabilities,
      ...(MODERN ? { versionNegotiation: { mode: { pin: opt.version } } } : {}),
    },
  );
  const transport = new StreamableHTTPClientTransport(new URL(opt.url), { fetch: freshConnectionFetch });
  await client.connect(transport);
  return client;
}

const results = [];
async function check(name, body) {
  const started = Date.now();
  try {
    await Promise.race([
      body(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`not within ${LIMIT_MS} ms`)), LIMIT_MS)),
    ]);
    results.push({ name, ok: true });
    console.log(`PASS ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack ?? error) });
    console.log(`FAIL ${name} (${Date.now() - started} ms): ${error?.stack ?? error}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, condition) {
  const deadline = Date.now() + LIMIT_MS;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${LIMIT_MS} ms`);
    await sleep(100);
  }
}

function pageOf(read) {
  return JSON.parse(read.contents[0].text);
}

let plain;
let tasker;
let created;
try {
  plain = await connect("interop-plain");
  tasker = await connect("interop-tasks", { extensions: { [TASKS]: {} } });
} catch (error) {
  console.error(`cannot connect at ${opt.version}: ${error?.stack ?? error}`);
  process.exit(2);
}

await check("tools/list names the query tool", async () => {
  const { tools } = await plain.listTools();
  expect(tools.some((tool) => tool.name === "query"), JSON.stringify(tools.map((t) => t.name)));
});

await check("tools/call answers a sample, the count and a link", async () => {
  const result = await plain.callTool({
    name: "query",
    arguments: { sql: "SELECT id, name, state FROM institutions ORDER BY id" },
  });
  expect(!result.isError, JSON.stringify(result));
  const meta = result.structuredContent?.metadata;
  expect(meta?.total_count > 20, JSON.stringify(meta));
  created = result.structuredContent.resource;
  expect(created?.uri?.startsWith("resource://"), JSON.stringify(created));
});

await check("resources/read pages the result on another instance", async () => {
  const read = await plain.readResource({ uri: `${created.uri}?offset=10&limit=5` });
  const page = pageOf(read);
  expect(page.offset === 10 && page.data.length === 5, JSON.stringify(page).slice(0, 300));
  if (MODERN) {
    expect(read.ttlMs > 0 && read.cacheScope === "public", `ttlMs ${read.ttlMs}, cacheScope ${read.cacheScope}`);
  }
});

await check("resources/list lists the result", async () => {
  const { resources } = await plain.listResources();
  expect(resources.some((resource) => resource.uri === created.uri), JSON.stringify(resources).slice(0, 500));
});

await check("prompts/get explains the result", async () => {
  const { prompts } = await plain.listPrompts();
  expect(prompts.map((p) => p.name).join() === "explore_result,answer_from_data", JSON.stringify(prompts));
  const prompt = await plain.getPrompt({ name: "explore_result", arguments: { uri: created.uri } });
  expect(prompt.messages[0].content.text.includes("Columns:"), JSON.stringify(prompt));
});

let rawId = 0;

/**
 * One JSON-RPC request of the tasks extension at 2026-07-28, sent as the SDK would (the `_meta`
 * envelope and the SEP-2243 headers) but decoded here: the official client 2.4.0 refuses a
 * `resultType: "task"` (`Unsupported result type 'task' for tools/call`), so the task checks of
 * 2026-07-28 go around its decoder, over the same balancer.
 */
async function rawRequest(method, params) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": opt.version,
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
    "io.modelcontextprotocol/clientInfo": { name: "interop-tasks", version: "0" },
  };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": opt.version,
    "mcp-method": method,
  };
  const name = method === "tools/call" ? params.name : params.taskId;
  if (name !== undefined) headers["mcp-name"] = name;
  rawId += 1;
  const response = await freshConnectionFetch(opt.url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: rawId, method, params: { ...params, _meta: meta } }),
  });
  const text = await response.text();
  const messages = text.trimStart().startsWith("{")
    ? [JSON.parse(text)]
    : text
        .split("\n")
        .filter((line) => line.startsWith("data:") && line.length > 5)
        .map((line) => JSON.parse(line.slice(5)));
  const answer = messages.find((message) => message.id === rawId);
  if (!answer) throw new Error(`${method}: no answer in ${text.slice(0, 300)}`);
  if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
  return answer.result;
}

/** A tasks-extension request: through the SDK on a 2025 session, around its decoder at 2026-07-28. */
function taskRequest(method, params) {
  return MODERN ? rawRequest(method, params) : tasker.request({ method, params }, AnyResult);
}

/** `tools/call` of the query tool as a task: the task's id. */
async function startTask(sql) {
  const created = await taskRequest("tools/call", { name: "query", arguments: { sql } });
  // A 2025 session's client drops `resultType` (its results carry none); the task is there.
  expect((created.resultType === "task" || !MODERN) && /^[0-9a-f]{32}$/.test(created.taskId), JSON.stringify(created));
  return created.taskId;
}

async function taskState(taskId) {
  return taskRequest("tasks/get", { taskId });
}

await check("a task is followed to its result across instances", async () => {
  const taskId = await startTask(slowSql(20_000));
  const done = await until("the task completes", async () => {
    const task = await taskState(taskId);
    expect(["working", "completed"].includes(task.status), JSON.stringify(task).slice(0, 500));
    return task.status === "completed" ? task : null;
  });
  expect(done.result?.structuredContent?.metadata?.total_count === 20_000, JSON.stringify(done).slice(0, 500));
  const unknown = await taskState("0".repeat(32)).then(
    () => "answered",
    (error) => error.code,
  );
  expect(unknown === -32602, `an unknown task: ${unknown}`);
});

await check("a task cancelled on another instance stops", async () => {
  const taskId = await startTask(slowSql(50_000_000));
  await until("the task works", async () => (await taskState(taskId)).status === "working");
  await taskRequest("tasks/cancel", { taskId });
  const started = Date.now();
  await until("the task ends cancelled", async () => (await taskState(taskId)).status === "cancelled");
  expect(Date.now() - started < 10_000, `cancelled after ${Date.now() - started} ms`);
});

if (MODERN) {
  await check("subscriptions/listen is told of a delete made elsewhere", async () => {
    const fresh = await plain.callTool({ name: "query", arguments: { sql: "SELECT id FROM institutions" } });
    const resource = fresh.structuredContent.resource;
    const updated = [];
    plain.setNotificationHandler("notifications/resources/updated", (notification) => {
      updated.push(notification.params.uri);
    });
    const subscription = await plain.listen({ resourceSubscriptions: [resource.uri] });
    expect(subscription.honoredFilter.resourceSubscriptions?.includes(resource.uri), JSON.stringify(subscription.honoredFilter));
    const deleted = await freshConnectionFetch(resource.url, { method: "DELETE" });
    expect(deleted.status === 204, `DELETE answered ${deleted.status}`);
    await until("the update arrives", async () => updated.includes(resource.uri));
    const how = await Promise.race([subscription.closed, sleep(10_000).then(() => "open")]);
    expect(how === "graceful", `the subscription ended ${how}`);
  });
} else {
  await check("resources/subscribe and unsubscribe are acknowledged", async () => {
    await plain.subscribeResource({ uri: created.uri });
    await plain.unsubscribeResource({ uri: created.uri });
  });
}

await Promise.allSettled([plain?.close(), tasker?.close()]);
const failed = results.filter((result) => !result.ok);
console.log(JSON.stringify({ version: opt.version, passed: results.length - failed.length, failed: failed.map((f) => f.name) }));
process.exit(failed.length === 0 ? 0 : 1);
