#!/usr/bin/env node
// Benchmarks of the result view (issue 22, point 8), in headless Chromium through the official MCP Apps
// host bridge, against a running demo serving the 269,000-row dataset:
//
//   cargo build --release -p dual-response-server
//   target/release/dual-response serve --addr 127.0.0.1:8080 --pending-after-ms 0 &
//   node crates/dual-response-server/browser/bench.mjs --demo http://127.0.0.1:8080 [--runs 15]
//
// Figures, each over --runs runs (median, min, max):
// * first rows: the host sends the tool result (`ui/notifications/tool-result`) → `__dualView.lastPaint` of
//   the first rows (a fresh view each run: new iframe, empty cache; the same 269,000-row tool result);
// * jump to the last row: `__dualView.scrollToRow(269000)` → the paint of that row (in the fresh view, so
//   its page is fetched), and a jump to a random row far from any cached page;
// * one page of 500 rows through the bridge: `resources/read resource://{id}?offset=O&limit=500` sent by the
//   view's frame to the host (postMessage) → AppBridge → the MCP client → the demo → back, as the view pages.
// Targets: first rows ≤ 300 ms, any jump ≤ 150 ms.

import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";

import { launch, newContext } from "./lib/browser.mjs";
import { bundleHost, startHostServer } from "./lib/host-server.mjs";
import * as view from "./lib/view.mjs";

const { values: opt } = parseArgs({
  options: { demo: { type: "string" }, runs: { type: "string", default: "15" }, json: { type: "boolean" } },
});
if (!opt.demo) {
  console.log("usage: node bench.mjs --demo http://127.0.0.1:PORT [--runs N] [--json]");
  process.exit(2);
}
const RUNS = Number(opt.runs);
const SQL = "SELECT * FROM degrees_awarded";
const PAGE = 500;

const watchdog = setTimeout(() => {
  console.error("bench.mjs: no result within 10 minutes");
  process.exit(2);
}, 600_000);

const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s.at(-1), n: s.length };
};
const fmt = (x) => `${x.toFixed(1)} ms`;

const browser = await launch();
const host = await startHostServer(opt.demo, await bundleHost());
const load = [loadavg()[0]];
const figures = { firstRows: [], jumpLast: [], jumpFar: [], page500: [] };
try {
  const { context, problems } = await newContext(browser);
  const page = await context.newPage();
  await page.goto(`${host.url}/host.html`);
  // One tool call: the 269,000-row resource every run opens.
  const toolResult = await page.evaluate((sql) => window.__host.callAs(undefined, "query", { sql }), SQL);
  const uri = toolResult.structuredContent?.resource?.uri;
  const total = Number(toolResult.structuredContent?.metadata?.total_count);
  if (!uri || total !== 269_000) throw new Error(`unexpected tool result: ${JSON.stringify(toolResult).slice(0, 300)}`);

  for (let run = 0; run < RUNS + 1; run++) {
    const { sentAt } = await page.evaluate(
      ({ toolResult, sql }) => window.__host.open({ args: { sql }, toolResult }).then((o) => ({ sentAt: o.sentAt })),
      { toolResult, sql: SQL },
    );
    const frame = await (await page.waitForSelector("iframe#view")).contentFrame();
    await frame.waitForFunction(() => window.__dualView?.lastPaint > 0, null, { polling: "raf", timeout: 30_000 });
    const painted = await frame.evaluate(() => performance.timeOrigin + window.__dualView.lastPaint);
    await view.waitReady(frame);
    await view.waitRow(frame, 2);

    const jump = (row) =>
      frame.evaluate(async (row) => {
        const t0 = performance.now();
        await window.__dualView.scrollToRow(row);
        // the paint of the row: wait until it is in the DOM and a paint happened after t0
        await new Promise((resolve, reject) => {
          const until = t0 + 10_000;
          const poll = () => {
            const el = document.querySelector(`#dv-grid [role=row][aria-rowindex="${row + 1}"]`);
            if (el && el.querySelector("[role=gridcell]")?.textContent && window.__dualView.lastPaint >= t0) resolve();
            else if (performance.now() > until) reject(new Error(`row ${row} not painted within 10 s`));
            else requestAnimationFrame(poll);
          };
          poll();
        });
        return window.__dualView.lastPaint - t0;
      }, row);
    const last = await jump(total);
    const far = await jump(1000 + Math.floor(Math.random() * (total - 2000)));
    if (run > 0) {
      // run 0 warms up the browser and the demo (the first sort of code paths); not counted
      figures.firstRows.push(painted - sentAt);
      figures.jumpLast.push(last);
      figures.jumpFar.push(far);
    }
  }

  // One page of 500 rows through the bridge, from the view's frame, as the view sends it.
  const frame = await (await page.waitForSelector("iframe#view")).contentFrame();
  for (let run = 0; run < RUNS + 1; run++) {
    const offset = Math.floor(Math.random() * (total - PAGE));
    const ms = await frame.evaluate(
      ({ uri, offset, limit }) =>
        new Promise((resolve, reject) => {
          const id = `bench-${Math.random().toString(36).slice(2)}`;
          const t0 = performance.now();
          const onMessage = (event) => {
            if (event.source !== window.parent || event.data?.id !== id) return;
            window.removeEventListener("message", onMessage);
            if (event.data.error) return reject(new Error(JSON.stringify(event.data.error)));
            // parsed, as the view does, before the clock stops
            const rows = JSON.parse(event.data.result.contents[0].text).data.length;
            const ms = performance.now() - t0;
            if (rows !== limit) reject(new Error(`the page held ${rows} rows, not ${limit}`));
            else resolve(ms);
          };
          window.addEventListener("message", onMessage);
          window.parent.postMessage(
            { jsonrpc: "2.0", id, method: "resources/read", params: { uri: `${uri}?offset=${offset}&limit=${limit}` } },
            "*",
          );
        }),
      { uri, offset, limit: PAGE },
    );
    if (run > 0) figures.page500.push(ms);
  }
  if (problems.length) console.error(`console errors during the bench:\n  ${[...new Set(problems)].join("\n  ")}`);
} finally {
  clearTimeout(watchdog);
  await browser.close().catch(() => {});
  await host.close();
}
load.push(loadavg()[0]);

const rows = [
  ["view opened → first rows painted (tool result sent → lastPaint)", figures.firstRows, 300],
  ["jump to the last row (269,000) → painted", figures.jumpLast, 150],
  ["jump to a random far row → painted", figures.jumpFar, 150],
  [`one page of ${PAGE} rows through the bridge (resources/read round trip)`, figures.page500, null],
];
if (opt.json) {
  console.log(JSON.stringify({ runs: RUNS, load, figures: Object.fromEntries(rows.map(([n, xs]) => [n, stat(xs)])) }, null, 2));
} else {
  console.log(`${RUNS} runs each; ${cpus().length} cores; load average ${load.map((l) => l.toFixed(2)).join(" → ")}\n`);
  console.log("| figure | target | median | min | max |\n|---|---|---:|---:|---:|");
  for (const [name, xs, target] of rows) {
    const s = stat(xs);
    console.log(`| ${name} | ${target ? `≤ ${target} ms` : "—"} | **${fmt(s.median)}** | ${fmt(s.min)} | ${fmt(s.max)} |`);
  }
}
