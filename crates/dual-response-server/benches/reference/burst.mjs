#!/usr/bin/env node
// burst.mjs — an "agent's burst" of MCP tool calls against one MCP server, timed per call.
//
//   node burst.mjs --url http://127.0.0.1:18080/mcp [--tool query] [--label B] [--json out.json]
//   node burst.mjs --stdio "node /path/server.js"   (spawn a stdio server instead)
//   node burst.mjs --url ... --smoke               (one call per query, print a summary, no timing)
//
// Phase 1: 12 calls back to back on one client session (next sent when the previous answered).
// Phase 2: 10 calls started at once (Promise.all) on one client session.
// Phase 3: each of the five queries 5 times back to back; median per query.
// Each phase starts the query cycle at query 1. One untimed `SELECT 1` warms the server first.
// A call is "refused" when the result has isError: true or the call throws.
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const QUERIES = [
  'SELECT * FROM degrees_awarded WHERE id <= 2',
  'SELECT * FROM degrees_awarded WHERE institution_id <= 110',
  'SELECT * FROM degrees_awarded',
  'SELECT field, award_level, gender, SUM(count) AS degrees FROM degrees_awarded GROUP BY field, award_level, gender',
  'SELECT a.id, a.name, b.id AS other FROM institutions AS a, (SELECT id FROM institutions LIMIT 1667) AS b',
];
const SHORT = ['q1 id<=2', 'q2 inst<=110', 'q3 all rows', 'q4 group by', 'q5 cross 10M'];

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const URL_ = arg('--url');
const STDIO = arg('--stdio');
const TOOL = arg('--tool', 'query');
const LABEL = arg('--label', URL_ || STDIO || '?');
const JSON_OUT = arg('--json');
const TIMEOUT_MS = Number(arg('--timeout-ms', '300000'));
const SMOKE = process.argv.includes('--smoke');
if (!URL_ && !STDIO) {
  console.error('need --url URL or --stdio "COMMAND ARGS"');
  process.exit(2);
}

function median(xs) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');

function resultText(res) {
  return (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function connect() {
  const client = new Client({ name: 'refbench-burst', version: '1.0.0' });
  let transport;
  if (URL_) {
    transport = new StreamableHTTPClientTransport(new URL(URL_));
  } else {
    const [command, ...args] = STDIO.split(' ').filter(Boolean);
    transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
  }
  await client.connect(transport);
  return { client, transport };
}

async function timedCall(client, qi) {
  const sql = QUERIES[qi];
  const t0 = performance.now();
  let ok = true, err = null, bytes = 0;
  try {
    const res = await client.callTool({ name: TOOL, arguments: { sql } }, undefined, { timeout: TIMEOUT_MS });
    const text = resultText(res);
    bytes = Buffer.byteLength(JSON.stringify(res));
    if (res.isError) { ok = false; err = text || JSON.stringify(res); }
  } catch (e) {
    ok = false; err = `${e?.name || 'Error'}: ${e?.message || e}`;
  }
  const ms = performance.now() - t0;
  return { q: qi, ms, ok, err, bytes };
}

function summarize(name, calls) {
  const ms = calls.map((c) => c.ms);
  const refused = calls.filter((c) => !c.ok);
  const s = { phase: name, n: calls.length, median: median(ms), max: Math.max(...ms), refused: refused.length };
  console.log(`${LABEL}  ${name.padEnd(22)} n=${String(s.n).padStart(2)}  median=${f(s.median).padStart(8)} ms  max=${f(s.max).padStart(8)} ms  refused=${s.refused}`);
  for (const c of calls) {
    console.log(`    ${SHORT[c.q].padEnd(13)} ${f(c.ms).padStart(8)} ms  ${c.ok ? 'ok' : 'REFUSED'}  ${c.bytes} B`);
  }
  for (const c of refused) console.log(`    refusal (${SHORT[c.q]}): ${String(c.err).slice(0, 600)}`);
  return s;
}

const { client, transport } = await connect();
console.log(`# ${LABEL}: connected to ${URL_ || STDIO} (server ${JSON.stringify(client.getServerVersion())}, session ${transport.sessionId ?? 'none (stateless)'})`);

// Warm-up, untimed.
const warm = await client.callTool({ name: TOOL, arguments: { sql: 'SELECT 1' } }, undefined, { timeout: TIMEOUT_MS });
if (warm.isError) console.log(`# warm-up SELECT 1 returned isError: ${resultText(warm)}`);

if (SMOKE) {
  const tools = await client.listTools();
  console.log(`# tools: ${tools.tools.map((t) => t.name).join(', ')}`);
  console.log(`# SELECT 1 -> ${resultText(warm).slice(0, 400)}`);
  for (let qi = 0; qi < QUERIES.length; qi++) {
    const c = await timedCall(client, qi);
    console.log(`# smoke ${SHORT[qi]}: ${f(c.ms)} ms ${c.ok ? 'ok' : 'REFUSED: ' + c.err} (${c.bytes} B)`);
  }
  await client.close();
  process.exit(0);
}

const out = { label: LABEL, target: URL_ || STDIO, started: new Date().toISOString(), phases: [], phase3: [] };

// Phase 1: 12 sequential calls.
const p1 = [];
for (let i = 0; i < 12; i++) p1.push(await timedCall(client, i % QUERIES.length));
out.phases.push({ ...summarize('phase 1 (12 seq)', p1), calls: p1 });

// Phase 2: 10 concurrent calls.
const p2 = await Promise.all(Array.from({ length: 10 }, (_, i) => timedCall(client, i % QUERIES.length)));
out.phases.push({ ...summarize('phase 2 (10 parallel)', p2), calls: p2 });

// Phase 3: each query 5 times back to back.
console.log(`${LABEL}  phase 3 (5x each, sequential)`);
for (let qi = 0; qi < QUERIES.length; qi++) {
  const cs = [];
  for (let k = 0; k < 5; k++) cs.push(await timedCall(client, qi));
  const ms = cs.map((c) => c.ms);
  const refused = cs.filter((c) => !c.ok);
  const r = { q: qi, sql: QUERIES[qi], median: median(ms), max: Math.max(...ms), refused: refused.length, ms };
  out.phase3.push(r);
  console.log(`    ${SHORT[qi].padEnd(13)} median=${f(r.median).padStart(8)} ms  max=${f(r.max).padStart(8)} ms  refused=${r.refused}  [${ms.map(f).join(', ')}]`);
  for (const c of refused) console.log(`    refusal (${SHORT[qi]}): ${String(c.err).slice(0, 600)}`);
}

if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(out, null, 2));
await client.close();
process.exit(0);
