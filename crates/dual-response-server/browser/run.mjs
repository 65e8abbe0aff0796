#!/usr/bin/env node
// The real-browser tests of the result view (issue 22, point 7), against running dual-response servers.
//
//   node run.mjs --demo http://127.0.0.1:PORT \
//       (--secure http://127.0.0.1:PORT2 --token-a TOKEN_A --token-b TOKEN_B | --no-secure) \
//       (--live http://127.0.0.1:PORT3 | --no-live) [--screenshot docs/view.png]
//
// --demo       a demo without --auth-tokens, serving the 269,000-row dataset, with --pending-after-ms 0;
// --secure     a demo with --auth-tokens (owners a and b: TOKEN_A, TOKEN_B), a short --pending-after-ms and
//              download links that expire within seconds (the pending, owner and expiry checks);
// --no-secure  leaves the pending, owner and expiry checks out on purpose (without it, a missing --secure
//              is an error).
// --live       a demo with --snapshot-max-mb 0: every result is live, so it has no column profile;
// --no-live    leaves the checks of a result without a profile out (without it, a missing --live is an error).
// The screenshot (README) is written only with --screenshot PATH or DUAL_SCREENSHOT=PATH.
//
// `cargo test -p dual-response-server --features browser --test browser` starts both demos and runs this; run
// `bash .ci/browser` first (Chromium and `npm ci`). Every check prints PASS or FAIL with the time it took;
// the exit code is 1 when any failed, 2 when the run as a whole could not proceed, passed its time limit
// or got SIGTERM (it prints its summary, every check's time and every retried REST read, and closes
// Chromium first). Nothing is skipped unless --no-secure says so.
//
// Time limits: every wait is a base value (sized for a loaded 2-core CI machine) times
// DUAL_BROWSER_TIME_SCALE (default 1, lib/timing.mjs); the whole run is bounded by
// DUAL_BROWSER_TIMEOUT_SECS (default 720 s times the scale).

import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const { TIME_SCALE, scaled } = await import("./lib/timing.mjs");

const { values: opt } = parseArgs({
  options: {
    demo: { type: "string" },
    secure: { type: "string" },
    "no-secure": { type: "boolean" },
    live: { type: "string" },
    "no-live": { type: "boolean" },
    "token-a": { type: "string" },
    "token-b": { type: "string" },
    screenshot: { type: "string" },
  },
});

const RUN_LIMIT_SECS = Number(process.env.DUAL_BROWSER_TIMEOUT_SECS) || scaled(720_000) / 1000;
/** The longest a check may take (a CSV export of the 269,000 rows takes 45 s on a loaded 2-core machine). */
const CHECK_LIMIT_MS = scaled(120_000);
/**
 * The longest a pending query may take to become ready in the view. SLOW_SQL costs about 15 s of one
 * core in the demo's debug build (its SQLite is compiled without optimisation); at load 9–10 on 2 cores
 * the demo gets a fraction of a core, and the two slow queries, run at once, take 90–120 s.
 */
const PENDING_LIMIT_MS = scaled(240_000);
/** The longest the rows of a page may take to show (a sort's order is derived first, maybe retried). */
const ROWS_LIMIT_MS = scaled(60_000);
/** The most row elements the view may hold at once (its pool is a screenful or a few). */
const DOM_ROWS_MAX = 300;
/** The most pages the view may keep. */
const CACHED_PAGES_MAX = 64;

export const BIG_SQL = "SELECT * FROM degrees_awarded";
export const BIG_TOTAL = 269_000;
const HTML_VALUE = "<img src=x onerror=alert(1)>";
/** A right-to-left override before "gnp.exe": acting, it shows "exe.png"; the view shows a marker. */
const BIDI_VALUE = "\u202Egnp.exe";
const BIDI_SHOWN = "⟨U+202E⟩gnp.exe";
const HTML_SQL = `SELECT '${HTML_VALUE}' AS v, '${BIDI_VALUE}' AS w`;
/** `value` as JSON for a failure message, its bidirectional controls as `\u…` (the message goes to a terminal). */
const quoted = (value) =>
  JSON.stringify(value)?.replace(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`);
const SORT_COLUMN = "count";
/**
 * Slow enough to outlast a short --pending-after-ms and to be seen pending with rows so far, and no
 * slower: the demo sends rows in batches of 1,000 (the progress the view shows), so the first 1,000
 * rows come from the first million steps (the first progress, soon after the tool call answers
 * pending) and the other 2,000 from the next 20 million (the time the view has to show that progress:
 * seconds on a fast idle machine, over a minute on a loaded 2-core one). Rows: n = 1,000, 2,000, …,
 * 1,000,000, then 1,010,000, 1,020,000, …, 21,000,000; twice = 2n.
 */
const SLOW_ROWS = 3000;
const SLOW_SQL =
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 21000000) " +
  "SELECT x AS n, x * 2 AS twice FROM c WHERE x % (CASE WHEN x <= 1000000 THEN 1000 ELSE 10000 END) = 0";
const SMALL_SQL = "SELECT id, name, state FROM institutions ORDER BY id LIMIT 120";
/** The result the refinement checks refine (6,000 rows: each refinement reads them all). */
const REFINE_SQL = "SELECT * FROM institutions";
const REFINE_TOTAL = 6000;
const FILTER = "state = 'NJ' AND enrollment > 1000";
const BAD_FILTER = "no_such_column = 1";

// ---------------------------------------------------------------------------------------------------
const results = [];
const started = Date.now();

function log(line) {
  process.stdout.write(`${line}\n`);
}

function fail(message) {
  throw new Error(message);
}

function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Runs one check: PASS with its note, or FAIL with its error; never throws. `limitMs`: its time limit. */
async function check(name, fn, limitMs = CHECK_LIMIT_MS) {
  const t0 = Date.now();
  const at = ((t0 - started) / 1000).toFixed(1);
  try {
    const note = await within(Promise.resolve().then(fn), limitMs, name);
    const ms = Date.now() - t0;
    results.push({ name, ok: true, ms, at });
    log(`PASS ${name}${note ? ` (${note})` : ""} [${ms} ms]`);
    return true;
  } catch (e) {
    const ms = Date.now() - t0;
    results.push({ name, ok: false, error: e?.message ?? String(e), ms, at });
    log(`FAIL ${name}: ${e?.message ?? e} [${ms} ms]`);
    return false;
  }
}

function problemsCheck(name, problems, from = 0) {
  return check(name, () => {
    const found = [...new Set(problems.slice(from))];
    if (found.length) fail(`${found.length} console error(s) or uncaught exception(s):\n  ${found.join("\n  ")}`);
    return "none";
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** How long past a link's `expires` the expiry checks wait (the server's clock is this machine's). */
const EXPIRY_MARGIN_MS = 1500;

/** The `expires` of a link (Unix seconds), in ms; fails unless it is near (the secure demo's links live seconds). */
function expiresOf(url) {
  const expires = Number(new URL(url).searchParams.get("expires"));
  if (!Number.isFinite(expires) || expires <= 0) fail(`the link has no expires: ${url}`);
  const left = expires * 1000 - Date.now();
  if (left > 20_000) fail(`the link expires in ${Math.round(left / 1000)} s; the secure demo must mint links that live a few seconds`);
  return expires * 1000;
}

/** Sleeps until `expiresMs` (from expiresOf) plus the margin. */
const untilExpired = (expiresMs) => sleep(Math.max(0, expiresMs + EXPIRY_MARGIN_MS - Date.now()));

// ---------------------------------------------------------------------------------------------------
// Preflight: node_modules, and the ext-apps app validator (absent from every published ext-apps so far).

function packageJson(name) {
  const path = join(HERE, "node_modules", name, "package.json");
  if (!existsSync(path)) {
    log(`error: ${path} is missing: run \`bash .ci/browser\` (it runs npm ci in ${HERE})`);
    process.exit(2);
  }
  return JSON.parse(readFileSync(path, "utf8"));
}

const extApps = packageJson("@modelcontextprotocol/ext-apps");
packageJson("@modelcontextprotocol/sdk");
packageJson("playwright-core");
packageJson("esbuild");

// Dynamic imports: a missing node_modules is reported above, not as a module resolution stack.
const { launch, newContext } = await import("./lib/browser.mjs");
const { bundleHost, startHostServer } = await import("./lib/host-server.mjs");
const view = await import("./lib/view.mjs");
const interaction = await import("./lib/interaction.mjs");
const profile = await import("./lib/profile.mjs");
const rest = await import("./lib/rest.mjs");
const refining = await import("./lib/refine.mjs");

await check(`ext-apps ${extApps.version}: its app validator runs when the package ships one`, () => {
  if (extApps.exports?.["./validator"]) {
    fail(
      `the installed @modelcontextprotocol/ext-apps ${extApps.version} exports ./validator (validateApp), ` +
        "but run.mjs does not run it yet: add a check that runs validateApp({ url }) against the demo's /mcp " +
        "and fails on any finding",
    );
  }
  return `absent: ${extApps.version} exports ${Object.keys(extApps.exports ?? {}).join(", ")}; nothing to run`;
});

const USAGE =
  "usage: node run.mjs --demo URL (--secure URL --token-a A --token-b B | --no-secure) (--live URL | --no-live) [--screenshot PATH]";
if (!opt.demo) {
  log(USAGE);
  process.exit(2);
}
if (opt.secure && opt["no-secure"]) {
  log(`error: --secure and --no-secure exclude each other\n${USAGE}`);
  process.exit(2);
}
if (!opt.secure && !opt["no-secure"]) {
  log(`error: no --secure demo: the pending, owner and expiry checks need one (--no-secure leaves them out)\n${USAGE}`);
  process.exit(2);
}
if (opt.live && opt["no-live"]) {
  log(`error: --live and --no-live exclude each other\n${USAGE}`);
  process.exit(2);
}
if (!opt.live && !opt["no-live"]) {
  log(`error: no --live demo: the checks of a result without a profile need one (--no-live leaves them out)\n${USAGE}`);
  process.exit(2);
}
if (opt.secure && (!opt["token-a"] || !opt["token-b"])) {
  log(`error: --secure needs --token-a and --token-b\n${USAGE}`);
  process.exit(2);
}

const watchdog = setTimeout(() => {
  log(`FAIL the browser tests did not finish within ${RUN_LIMIT_SECS} s (DUAL_BROWSER_TIMEOUT_SECS)`);
  summary();
  process.exit(2);
}, RUN_LIMIT_SECS * 1000);

function summary() {
  const failed = results.filter((r) => !r.ok);
  // every check's own time (started at, in s since the run began; took, in ms), and every REST read that
  // was retried: what a slow or loaded machine did to the run
  log(`\nTIMING (time scale ${TIME_SCALE}; run limit ${RUN_LIMIT_SECS} s, check limit ${CHECK_LIMIT_MS / 1000} s)`);
  for (const r of results) log(`  ${r.ok ? "PASS" : "FAIL"} ${String(r.ms ?? "?").padStart(7)} ms  at ${String(r.at ?? "?").padStart(6)} s  ${r.name}`);
  if (rest?.retries.length) {
    log(`RETRIED REST READS (${rest.retries.length}: a 503 or 409 with Retry-After, asked again after it)`);
    for (const r of rest.retries) log(`  ${r.status} ${r.code}, asked again after ${r.waitMs} ms: ${r.url}`);
  }
  log(`\n${results.length - failed.length} passed, ${failed.length} failed, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const r of failed) log(`  FAILED ${r.name}: ${r.error.split("\n")[0]}`);
  return failed.length;
}

// ---------------------------------------------------------------------------------------------------
// Helpers over the host page.

const idOf = (uri) => uri.replace(/^resource:\/\//, "").split("?")[0];
const restBase = (demo, uri) => `${demo.replace(/\/$/, "")}/resources/${idOf(uri)}`;
const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** Opens `args` of `tool` (or `toolResult`) in the host page; returns the tool result and the view's frame. */
async function openInHost(page, { token, sql, toolResult, prompt, downloadFile = false, modelContext = true, noRefine = false }) {
  const opened = await page.evaluate(
    ({ token, sql, toolResult, prompt, downloadFile, modelContext, noRefine }) =>
      window.__host
        .open({ token, args: sql ? { sql } : {}, toolResult, prompt, downloadFile, modelContext, noRefine })
        .then((o) => ({ sentAt: o.sentAt, result: o.result, uri: o.uri, uiMeta: o.uiMeta })),
    { token, sql, toolResult, prompt, downloadFile, modelContext, noRefine },
  );
  const frame = await (await page.waitForSelector("iframe#view")).contentFrame();
  if (!frame) fail("the view's iframe has no frame");
  return { ...opened, frame };
}

function dualOf(result) {
  if (result.isError) fail(`the tool call failed: ${textOf(result).slice(0, 500)}`);
  const sc = result.structuredContent;
  if (!sc?.resource?.uri || !sc?.metadata) fail(`no structuredContent.resource/metadata in ${JSON.stringify(result).slice(0, 500)}`);
  return {
    uri: sc.resource.uri,
    total: Number(sc.metadata.total_count),
    status: sc.metadata.status,
    columns: (sc.metadata.columns ?? []).map((c) => (typeof c === "string" ? c : c.name)),
  };
}

/** `dual_download_link` through a client of the host page (as `token`'s owner), outside the view. */
async function mintLink(page, token, args) {
  const result = await page.evaluate(({ token, args }) => window.__host.callAs(token, "dual_download_link", args), { token, args });
  if (result.isError) fail(`dual_download_link ${JSON.stringify(args)} failed: ${textOf(result)}`);
  const url = result.structuredContent?.url;
  if (!url) fail(`dual_download_link gave no structuredContent.url: ${JSON.stringify(result).slice(0, 300)}`);
  return { url, expiresAt: result.structuredContent.expires_at };
}

/** The download link the view hands out: `ui/open-link` in the host (Apps) or the link's href (REST). */
async function downloadLink(target, which) {
  if (target.mode === "apps") {
    const before = await target.page.evaluate(() => window.__host.events.openLinks.length);
    await target.frame.locator(`#dv-download-${which}`).click();
    await target.page.waitForFunction((n) => window.__host.events.openLinks.length > n, before, { timeout: scaled(30_000) });
    return target.page.evaluate(() => window.__host.events.openLinks.at(-1));
  }
  const href = await target.frame.evaluate((id) => {
    const el = document.getElementById(id);
    if (!el) return { missing: true };
    return { tag: el.tagName, href: el.href ?? el.getAttribute("href") };
  }, `dv-download-${which}`);
  if (href.missing) fail(`#dv-download-${which} is missing`);
  if (!href.href) fail(`#dv-download-${which} is a ${href.tag} without an href (REST mode: a plain link)`);
  return href.href;
}

const PARQUET = "application/vnd.apache.parquet";

/** The bytes of a response, and whether they are a whole Parquet file (`PAR1` at both ends). */
async function parquetBytes(response) {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const magic = (at) => String.fromCharCode(...bytes.subarray(at, at + 4));
  return { bytes, whole: bytes.length > 8 && magic(0) === "PAR1" && magic(bytes.length - 4) === "PAR1" };
}

/**
 * Downloads in hosts (MCP Apps): a host that advertises `hostCapabilities.downloadFile` gets
 * `ui/download-file` with the capability link as a `resource_link` (named `{id}.{ext}`, its media type) and
 * no `ui/open-link`; one that does not gets `ui/open-link` with the link and no `ui/download-file`. Either
 * link is the server's export of the result: the same bytes as `GET /data` with `Accept` of the format.
 */
async function hostDownloadChecks(page, demo) {
  const events = () =>
    page.evaluate(() => ({ links: window.__host.events.openLinks.length, downloads: window.__host.events.downloads.length }));
  const sameAsExport = async (url, uri) => {
    const u = new URL(url);
    if (u.searchParams.get("format") !== "parquet" || !u.searchParams.get("token")) fail(`not a Parquet capability link: ${url}`);
    if (!u.pathname.endsWith(`/${idOf(uri)}/data`)) fail(`the link ${u.pathname} is not the result's /data`);
    const viaLink = await rest.get(url);
    if (viaLink.status !== 200) fail(`GET the link: ${viaLink.status} ${await viaLink.text()}`);
    if (viaLink.headers.get("content-type") !== PARQUET) fail(`the link's Content-Type is ${viaLink.headers.get("content-type")}`);
    const disposition = viaLink.headers.get("content-disposition") ?? "";
    if (disposition !== `attachment; filename="${idOf(uri)}.parquet"`) fail(`Content-Disposition ${disposition}`);
    const got = await parquetBytes(viaLink);
    if (!got.whole) fail(`the link gave ${got.bytes.length} bytes that are not a whole Parquet file`);
    const direct = await parquetBytes(await rest.get(`${restBase(demo, uri)}/data`, { headers: { Accept: PARQUET } }));
    if (direct.bytes.length !== got.bytes.length || direct.bytes.some((b, i) => b !== got.bytes[i]))
      fail(`the link gave ${got.bytes.length} bytes, the export with Accept: ${PARQUET} ${direct.bytes.length} different ones`);
    return got.bytes.length;
  };

  await check("apps: a host without downloadFile gets ui/open-link with the Parquet capability link", async () => {
    const opened = await openInHost(page, { sql: SMALL_SQL });
    const { uri } = dualOf(opened.result);
    await view.waitReady(opened.frame);
    const before = await events();
    await opened.frame.locator("#dv-download-parquet").click();
    await page.waitForFunction((n) => window.__host.events.openLinks.length > n, before.links, { timeout: scaled(30_000) });
    const url = await page.evaluate(() => window.__host.events.openLinks.at(-1));
    if ((await events()).downloads !== before.downloads) fail("the view sent ui/download-file to a host that does not offer it");
    return `${await sameAsExport(url, uri)} bytes through ui/open-link`;
  });

  await check("apps: a host with downloadFile gets ui/download-file with the link as a resource_link", async () => {
    const opened = await openInHost(page, { sql: SMALL_SQL, downloadFile: true });
    const { uri } = dualOf(opened.result);
    await view.waitReady(opened.frame);
    const got = [];
    for (const [which, mimeType] of [["parquet", PARQUET], ["csv", "text/csv"]]) {
      const before = await events();
      await opened.frame.locator(`#dv-download-${which}`).click();
      await page.waitForFunction((n) => window.__host.events.downloads.length > n, before.downloads, { timeout: scaled(30_000) });
      const params = await page.evaluate(() => window.__host.events.downloads.at(-1));
      if ((await events()).links !== before.links) fail(`the ${which} download also sent ui/open-link`);
      const contents = params?.contents;
      if (!Array.isArray(contents) || contents.length !== 1) fail(`ui/download-file params ${JSON.stringify(params)}`);
      const [link] = contents;
      if (link.type !== "resource_link") fail(`a ${link.type}, not a resource_link: ${JSON.stringify(link)}`);
      if (link.name !== `${idOf(uri)}.${which}`) fail(`named ${link.name}, not ${idOf(uri)}.${which}`);
      if (link.mimeType !== mimeType) fail(`mimeType ${link.mimeType}, not ${mimeType}`);
      if (new URL(link.uri).searchParams.get("format") !== which) fail(`the link ${link.uri} is not format=${which}`);
      if (which === "parquet") got.push(`${await sameAsExport(link.uri, uri)} Parquet bytes`);
      else {
        const rows = (await rest.csvRecords(await rest.get(link.uri))) - 1;
        if (rows !== 120) fail(`the CSV link gave ${rows} rows, not 120`);
        got.push(`${rows} CSV rows`);
      }
    }
    return got.join(", ");
  });
}

/** Records #dv-status (and #dv-total) until the view says ready or failed. */
async function watchStatus(frame, limitMs) {
  const seen = [];
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs) {
    const s = await frame
      .evaluate(() => {
        const st = document.getElementById("dv-status");
        const tot = document.getElementById("dv-total");
        return st ? { status: st.getAttribute("data-status"), text: st.textContent.trim(), total: tot?.textContent.trim() ?? "" } : null;
      })
      .catch(() => null);
    if (s && (seen.length === 0 || JSON.stringify(seen.at(-1)) !== JSON.stringify(s))) seen.push(s);
    if (s && (s.status === "ready" || s.status === "failed")) return seen;
    // the view polls a pending result every second: 200 ms sees each state it shows, and leaves the CPU
    // to the query on a loaded machine
    await sleep(200);
  }
  fail(`the view did not become ready within ${limitMs / 1000} s; statuses seen: ${JSON.stringify(seen)}`);
}

// ---------------------------------------------------------------------------------------------------
// The checks every view gets, in either transport, against the 269,000-row result.

async function bigResultChecks(label, target, expected, exportLast) {
  const { frame } = target;
  await check(`${label}: the total is shown`, async () => {
    const t = await view.total(frame);
    if (!t) fail("#dv-total is missing");
    if (t.attr !== String(expected.total)) fail(`#dv-total data-total="${t.attr}", the tool result says ${expected.total}`);
    if (t.digits !== String(expected.total)) fail(`#dv-total shows "${t.text}", not ${expected.total}`);
    const rc = await view.ariaRowCount(frame);
    if (rc !== expected.total + 1) fail(`#dv-grid aria-rowcount=${rc}, not ${expected.total + 1}`);
    const names = await view.columnNames(frame);
    if (JSON.stringify(names) !== JSON.stringify(expected.columns)) fail(`header columns ${JSON.stringify(names)}, metadata ${JSON.stringify(expected.columns)}`);
    return `${t.text}; ${names.length} columns`;
  });

  if (target.afterTotal) await target.afterTotal();

  await check(`${label}: the last row is reached by jumping, its values equal the REST export's last row`, async () => {
    await view.jumpTo(frame, expected.total);
    const cells = await view.waitRow(frame, expected.total + 1);
    view.assertRow(cells, expected.columns, exportLast, `row ${expected.total}`);
    return `row ${expected.total}: ${cells.join(" | ")}`;
  });

  await check(`${label}: the last row is reached by scrolling, its values equal the REST export's last row`, async () => {
    await view.scrollBy(frame, { to: "top" });
    await view.waitRow(frame, 2);
    const s = await view.scrollBy(frame, { to: "bottom" });
    const cells = await view.waitRow(frame, expected.total + 1);
    view.assertRow(cells, expected.columns, exportLast, `row ${expected.total}`);
    return `scrolled ${s.id} to ${s.after} of ${s.scrollHeight}`;
  });

  await check(`${label}: DOM rows stay bounded while scrolling`, async () => {
    let most = { domRows: 0, rowElements: 0, cachedPages: 0 };
    let last;
    // each sample's counts must be numbers: a missing field must not pass as 0
    const sample = async () => {
      last = await view.stats(frame);
      for (const k of ["domRows", "cachedPages"])
        if (typeof last[k] !== "number" || !Number.isFinite(last[k]) || last[k] < 0) fail(`__dualView.stats().${k} is ${last[k]}, not a count`);
      for (const k of Object.keys(most)) most[k] = Math.max(most[k], last[k]);
    };
    const positions = [];
    for (let i = 0; i <= 24; i++) positions.push(i / 24);
    for (let i = 0; i < 12; i++) positions.push(Math.random());
    for (const fraction of positions) {
      await view.scrollBy(frame, { fraction });
      await sleep(30);
      await sample();
    }
    // a run of small scrolls, as a wheel makes them
    for (let i = 0; i < 40; i++) {
      await view.scrollBy(frame, { by: 240 });
      if (i % 8 === 0) await sample();
    }
    if (most.domRows > DOM_ROWS_MAX || most.rowElements > DOM_ROWS_MAX)
      fail(`up to ${most.domRows} DOM rows (stats) / ${most.rowElements} [role=row] elements; at most ${DOM_ROWS_MAX} expected`);
    if (most.cachedPages > CACHED_PAGES_MAX) fail(`up to ${most.cachedPages} cached pages; at most ${CACHED_PAGES_MAX} expected`);
    return `${positions.length + 40} positions: at most ${most.domRows} DOM rows, ${most.rowElements} row elements, ${most.cachedPages} cached pages; ${last.pagesFetched} pages fetched`;
  });

  for (const which of ["csv", "ndjson"]) {
    await check(`${label}: the ${which.toUpperCase()} download link yields exactly total_count rows; a tampered one is 404`, async () => {
      const url = await downloadLink(target, which);
      const u = new URL(url);
      if (!u.searchParams.get("token") || !u.searchParams.get("expires")) fail(`the link has no token/expires: ${url}`);
      const response = await rest.get(url);
      if (response.status !== 200) fail(`GET ${u.pathname} of the link: ${response.status} ${await response.text()}`);
      const disposition = response.headers.get("content-disposition") ?? "";
      let rows;
      if (which === "csv") rows = (await rest.csvRecords(response)) - 1;
      else rows = (await rest.lines(response)).count;
      if (rows !== expected.total) fail(`the ${which} link gave ${rows} rows, total_count is ${expected.total}`);
      // controls: the same URL re-encoded by the same helpers (same token, same format) is still 200, so
      // each 404 below comes from the change, not from the re-encoding
      const same = await rest.get(rest.withParam(url, "token", u.searchParams.get("token")));
      await same.body?.cancel();
      if (same.status !== 200) fail(`control: the link re-encoded with the same token got ${same.status}, not 200`);
      const tampered = await rest.get(rest.tamperToken(url));
      await tampered.body?.cancel();
      if (tampered.status !== 404) fail(`a tampered token got ${tampered.status}, not 404`);
      if (target.mode === "apps") {
        // a data token covers its one format (the standalone page's links carry its read token, which
        // covers every /data request of the resource)
        if (!u.searchParams.get("format")) fail(`the link has no format=: ${url}`);
        const sameFormat = await rest.get(rest.withParam(url, "format", u.searchParams.get("format")));
        await sameFormat.body?.cancel();
        if (sameFormat.status !== 200) fail(`control: the link re-encoded with the same format= got ${sameFormat.status}, not 200`);
        const otherFormat = await rest.get(rest.withParam(url, "format", which === "csv" ? "json" : "csv"));
        await otherFormat.body?.cancel();
        if (otherFormat.status !== 404) fail(`the link with another format= got ${otherFormat.status}, not 404`);
      }
      return `${rows} rows; ${disposition || "no Content-Disposition"}`;
    });
  }

  await check(`${label}: a sort by ${SORT_COLUMN} descending matches the REST export sorted the same way`, async () => {
    await view.sortBy(frame, SORT_COLUMN, "descending");
    // a sort's first read derives the order (one scan of the snapshot, a slot of --sort-concurrency): on a
    // loaded machine the export may find both slots taken (the view's ascending and descending orders) and
    // be 503 overloaded with Retry-After, which rest.ndjson honours as a client does
    const sorted = await rest.ndjson(`${expected.rest}/data?sort=${SORT_COLUMN}:desc&limit=20`, { keep: 20 });
    if (sorted.status !== 200) fail(`the sorted export: ${sorted.status} ${sorted.body} (after ${sorted.retried} retries)`);
    await view.scrollBy(frame, { to: "top" });
    await view.jumpTo(frame, 1);
    await view.waitRow(frame, 2, ROWS_LIMIT_MS);
    // the first rows the view shows (as many of the 20 as are in the DOM, at least 5)
    let compared = 0;
    for (let i = 0; i < 20; i++) {
      const cells = await view.rowCells(frame, i + 2);
      if (!cells) break;
      view.assertRow(cells, expected.columns, sorted.first[i], `sorted row ${i + 1}`);
      compared += 1;
    }
    if (compared < 5) fail(`only ${compared} sorted rows were in the DOM at the top`);
    const lastSorted = await rest.ndjson(`${expected.rest}/data?sort=${SORT_COLUMN}:desc&offset=${expected.total - 1}&limit=1`, { keep: 1 });
    if (lastSorted.status !== 200) fail(`the sorted export's last row: ${lastSorted.status} ${lastSorted.body} (after ${lastSorted.retried} retries)`);
    await view.jumpTo(frame, expected.total);
    const cells = await view.waitRow(frame, expected.total + 1, ROWS_LIMIT_MS);
    view.assertRow(cells, expected.columns, lastSorted.first[0], `sorted row ${expected.total}`);
    const retried = sorted.retried + lastSorted.retried;
    const { busyRetries } = await view.stats(frame);
    return `first ${compared} rows and row ${expected.total} equal; ${retried} export retries, ${busyRetries} busy retries of the view`;
  });

  // REST: on a page of its own (busyRestCheck), as Chromium logs the routed 503s as console errors
  if (target.mode === "apps") {
    await check(`${label}: a sorted page the server is too busy for is asked for again; the sort stays`, () => busySortCheck(target, expected));
  }
}

/**
 * The view's answer to a retryable error of a sorted page (the server had no capacity: every sort slot
 * taken, or no database connection): the rows come once the read is asked again, the sort stays, no
 * error is shown and scrollToRow waits for the rows instead of failing. The first two reads of the
 * ascending order fail that way: in Apps through the host's bridge (the JSON-RPC error dual-rmcp sends,
 * -32603 with data.error "OVERLOADED"); in REST by routing the page's POSTs to a 503 overloaded with
 * Retry-After: 1 (that page's context is its own: Chromium logs the 503s as console errors).
 */
async function busySortCheck(target, expected) {
  const { frame } = target;
  const want = "ascending";
  const param = `${SORT_COLUMN}:asc`;
  const injected = { count: 0 };
  let unroute = async () => {};
  if (target.mode === "apps") {
    await target.page.evaluate((match) => window.__host.failReads({ count: 2, match }), `sort=${param}`);
  } else {
    const handler = async (route) => {
      const body = route.request().postDataJSON?.() ?? null;
      if (route.request().method() === "POST" && body?.sort?.field === SORT_COLUMN && body.sort.order === "asc" && injected.count < 2) {
        injected.count += 1;
        await route.fulfill({
          status: 503,
          headers: { "retry-after": "1", "content-type": "application/json" },
          body: JSON.stringify({
            error: "overloaded",
            message: "The server has no capacity for this request right now; retry in 1 s",
            retryable: true,
          }),
        });
        return;
      }
      await route.fallback();
    };
    await target.page.route("**/resources/**", handler);
    unroute = () => target.page.unroute("**/resources/**", handler);
  }
  try {
    const before = (await view.stats(frame)).busyRetries;
    await view.sortBy(frame, SORT_COLUMN, want);
    // asked at once, while the first read fails: must wait for the rows, not reject
    const scrolled = frame.evaluate(() => window.__dualView.scrollToRow(1).then(() => "resolved", (e) => `rejected: ${e.message}`));
    const sorted = await rest.ndjson(`${expected.rest}/data?sort=${param}&limit=20`, { keep: 20 });
    if (sorted.status !== 200) fail(`the sorted export: ${sorted.status} ${sorted.body} (after ${sorted.retried} retries)`);
    const outcome = await scrolled;
    if (outcome !== "resolved") fail(`__dualView.scrollToRow(1) during the busy reads: ${outcome}`);
    // The rows shown before the sort may stay on screen until the sorted page is painted: wait for
    // the first row to be the export's (a loaded machine paints late), then compare them all.
    let cells = await view.waitRow(frame, 2, ROWS_LIMIT_MS);
    const painted = Date.now() + ROWS_LIMIT_MS;
    while (Date.now() < painted) {
      try {
        view.assertRow(cells, expected.columns, sorted.first[0], "sorted row 1");
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
        cells = await view.rowCells(frame, 2);
      }
    }
    const left = target.mode === "apps" ? (await target.page.evaluate(() => window.__host.faultsLeft())).left : 2 - injected.count;
    if (left !== 0) fail(`${left} of the 2 busy answers were never asked for: the test did not reach the view's retry`);
    const after = await view.stats(frame);
    if (after.busyRetries - before < 2) fail(`the view counted ${after.busyRetries - before} busy retries, not 2`);
    const sort = await frame.locator(`#dv-grid [role=columnheader][data-column="${SORT_COLUMN}"]`).getAttribute("aria-sort");
    if (sort !== want) fail(`after the busy answers the sort is ${sort}, not ${want}: the view gave the sort up`);
    const error = await frame.evaluate(() => {
      const e = document.getElementById("dv-error");
      return e.hidden ? "" : e.textContent;
    });
    if (error) fail(`#dv-error shows "${error}" for answers that were retried`);
    const note = await frame.evaluate(() => {
      const m = document.getElementById("dv-message");
      return m.hidden ? "" : `${m.dataset.kind}: ${m.textContent}`;
    });
    if (note.startsWith("busy")) fail(`#dv-message still says "${note}" once the rows came`);
    for (let i = 0; i < 5; i++) {
      const row = i === 0 ? cells : await view.rowCells(frame, i + 2);
      view.assertRow(row, expected.columns, sorted.first[i], `sorted row ${i + 1}`);
    }
    return `2 busy answers, asked again ${after.busyRetries - before} times; the first 5 rows equal the export's, the sort stays ${want}`;
  } finally {
    if (target.mode === "apps") await target.page.evaluate(() => window.__host.failReads({ count: 0 })).catch(() => {});
    await unroute().catch(() => {});
  }
}

/**
 * The column profile in the view of the 269,000-row result: read until complete (the tool result carries
 * none: the snapshot is still written when the tool answers), the `count` header's histogram and line, the
 * `gender` header's top values, the popover on keyboard focus and hover, and the chart panel (Apps: in the
 * host's info colour, sent as a style variable; REST: the view's own).
 */
async function profileChecks(label, target, expected) {
  const { frame } = target;
  let complete;
  const ok = await check(`${label}: the column profile is read until it is complete`, async () => {
    complete = await profile.completeProfile(rest.get, expected.rest);
    const said = await profile.waitState(frame, ["complete"], scaled(120_000));
    if (said.reads < 1) fail(`the view shows a complete profile it never read: ${JSON.stringify(said).slice(0, 200)}`);
    if (said.profile?.rows !== expected.total) fail(`the view's profile has ${said.profile?.rows} rows, not ${expected.total}`);
    return `${said.reads} read(s); ${complete.columns.length} columns of ${complete.rows} rows`;
  });
  if (!ok) return;
  await check(`${label}: a numeric header shows its histogram, null share and distinct count`, () =>
    profile.headerHistogram(frame, complete, SORT_COLUMN),
  );
  await check(`${label}: a header of few values shows its top values`, () => profile.headerTopValues(frame, complete, "gender"));
  await check(`${label}: keyboard focus (and the pointer) on a header shows the full profile, aria-describedby`, () =>
    profile.popover(frame, complete, SORT_COLUMN, "year"),
  );
  await check(`${label}: C opens the chart panel (SVG, role=img, aria-label, a bar per bin); Escape returns the focus`, async () => {
    if (target.mode !== "apps") return profile.chart(frame, complete, SORT_COLUMN, "rgb(37, 99, 235)");
    await target.page.evaluate(() => window.__host.setHostContext({ styles: { variables: { "--color-text-info": "#0a7d3e" } } }));
    return profile.chart(frame, complete, SORT_COLUMN, "rgb(10, 125, 62)");
  });
  await check(`${label}: a header's chart button opens the chart of its top values, without sorting`, () =>
    profile.chartTopValues(frame, complete, "gender"),
  );
  return complete;
}

async function htmlValueCheck(label, frame) {
  await check(`${label}: an HTML value renders as text`, async () => {
    const cells = await view.waitRow(frame, 2);
    if (cells?.[0] !== HTML_VALUE) fail(`the cell shows ${JSON.stringify(cells)}, not ${JSON.stringify(HTML_VALUE)}`);
    const images = await frame.evaluate(() => document.querySelectorAll("img").length);
    if (images) fail(`the document holds ${images} img element(s)`);
    return `shown as ${JSON.stringify(cells[0])}`;
  });
  await check(`${label}: bidirectional text is isolated and its override shown as a marker`, async () => {
    const cells = await view.waitRow(frame, 2);
    if (cells?.[1] !== BIDI_SHOWN) fail(`the cell shows ${quoted(cells?.[1])}, not ${quoted(BIDI_SHOWN)}`);
    const layout = await frame.evaluate(() => {
      const isolated = (node) => ({ dir: node.getAttribute("dir"), bidi: getComputedStyle(node).unicodeBidi });
      return {
        cells: [...document.querySelectorAll('#dv-grid [role=row][aria-rowindex="2"] [role=gridcell]')].map(isolated),
        heads: [...document.querySelectorAll("#dv-grid [role=columnheader] .dv-colname")].map(isolated),
        title: document.getElementById("dv-title").textContent,
      };
    });
    for (const [what, nodes] of [["cell", layout.cells], ["column name", layout.heads]]) {
      if (!nodes.length) fail(`no ${what} found`);
      const wrong = nodes.filter((n) => n.dir !== "auto" || n.bidi !== "isolate");
      if (wrong.length) fail(`a ${what} is not isolated: ${JSON.stringify(wrong)}`);
    }
    if (layout.title.includes("\u202E")) fail(`the title carries a raw U+202E: ${quoted(layout.title)}`);
    return `shown as ${JSON.stringify(cells[1])}; ${layout.cells.length} cells and ${layout.heads.length} column names dir=auto, unicode-bidi: isolate`;
  });
}

/** Expects a pending view: pending first, with rows so far, then ready with every row. */
async function pendingCheck(label, frame, toolStatus, exportLastOf) {
  await check(`${label}: a pending query shows progress, then its rows`, async () => {
    if (toolStatus !== "pending") fail(`the tool result was ${toolStatus}, not pending (the query was not slow enough for --pending-after-ms)`);
    const t0 = Date.now();
    const seen = await watchStatus(frame, PENDING_LIMIT_MS);
    const readyAfter = Date.now() - t0;
    const pending = seen.filter((s) => s.status === "pending");
    if (!pending.length) fail(`the view never said pending: ${JSON.stringify(seen)}`);
    if (seen.at(-1).status !== "ready") fail(`the view ended ${JSON.stringify(seen.at(-1))}`);
    // progress: a positive number of rows so far, in the status line or the total, while pending
    const rowsSoFar = (s) => Math.max(...[s.text, s.total].map((t) => Number((t.match(/\d[\d,.\s\u00a0\u202f]*/) ?? ["0"])[0].replace(/\D/g, "")) || 0));
    if (!pending.some((s) => rowsSoFar(s) > 0))
      fail(`no rows so far were shown while pending (the demo reports them in batches of 1,000): ${JSON.stringify(pending)}`);
    const t = await view.total(frame);
    if (t.attr !== String(SLOW_ROWS)) fail(`total ${t.attr} when ready, not ${SLOW_ROWS}`);
    await view.jumpTo(frame, SLOW_ROWS);
    const cells = await view.waitRow(frame, SLOW_ROWS + 1, ROWS_LIMIT_MS);
    view.assertRow(cells, ["n", "twice"], await exportLastOf(), `row ${SLOW_ROWS}`);
    return `${pending.length} pending states (${pending.map((s) => s.text || s.total).slice(0, 4).join(" → ")}), then ready with ${t.attr} rows after ${(readyAfter / 1000).toFixed(1)} s`;
  }, PENDING_LIMIT_MS + ROWS_LIMIT_MS);
}

// ---------------------------------------------------------------------------------------------------
// Refining in the view (docs/DESIGN.md §4): a filter, a group-by, Back step by step, the SQL's error
// inline, and (Apps) the refined result handed to the model. `target`: {mode, page, frame}; `parent`:
// {uri, rest, total, columns} of the result shown (REFINE_SQL).

/** The refined result shown after a refinement: its total and first row equal the server's for the same SQL. */
async function sameAsServer(frame, parent, sql, columns) {
  const r = await refining.waitDepth(frame, 1);
  if (r.sql !== sql) fail(`the view ran ${JSON.stringify(r.sql)}, not ${JSON.stringify(sql)}`);
  if (!r.uri.startsWith("resource://") || r.uri === parent.uri) fail(`the refined result's uri is ${r.uri}`);
  if (JSON.stringify(r.stack) !== JSON.stringify([parent.uri])) fail(`Back returns to ${JSON.stringify(r.stack)}, not [${parent.uri}]`);
  const server = await refining.serverRefine(parent.rest, sql);
  if (server.status !== 201) fail(`the server's answer to the same SQL: ${server.status} ${JSON.stringify(server.json).slice(0, 300)}`);
  const expected = Number(server.json.metadata?.total_count);
  const t = await view.total(frame);
  if (t.attr !== String(expected)) fail(`the view shows ${t.attr} rows, the server answers ${expected} for the same SQL`);
  const rc = await view.ariaRowCount(frame);
  if (rc !== expected + 1) fail(`aria-rowcount ${rc}, not ${expected + 1}`);
  const names = await view.columnNames(frame);
  if (JSON.stringify(names) !== JSON.stringify(columns)) fail(`the refined header shows ${JSON.stringify(names)}, not ${JSON.stringify(columns)}`);
  if (expected > 0) view.assertRow(await view.waitRow(frame, 2), columns, server.json.results[0], "the refined result's first row");
  return { r, total: expected };
}

async function refineChecks(label, target, parent) {
  const { frame } = target;
  const filterSql = `SELECT * FROM result WHERE ${FILTER}`;
  let filtered;
  await check(`${label}: a filter shows the refined rows in the same view, with the server's total for the same SQL`, async () => {
    const before = await refining.crumbs(frame);
    if (!before.hidden) fail("the breadcrumb shows before any refinement");
    await refining.filter(frame, FILTER);
    filtered = await sameAsServer(frame, parent, filterSql, parent.columns);
    if (!(filtered.total > 0 && filtered.total < parent.total)) fail(`${filtered.total} rows of ${parent.total}: not a filter that tells`);
    const c = await refining.crumbs(frame);
    if (c.hidden || c.back !== "Back to the full result" || c.steps.length !== 1 || !c.here?.includes(FILTER))
      fail(`the breadcrumb: ${JSON.stringify(c)}`);
    if (c.toModel !== (target.mode === "apps")) fail(`"Send to the model" is ${c.toModel ? "offered" : "not offered"} (${target.mode})`);
    if (await refining.errorShown(frame)) fail(`#dv-refine-error shows "${await refining.errorShown(frame)}"`);
    return `${filtered.total} of ${parent.total} rows; ${filtered.r.uri}; breadcrumb ${c.steps.join(" › ")} › ${c.here}`;
  });
  if (!filtered) return;

  await check(`${label}: the refined result downloads as a result of its own (CSV: its total, from its own id)`, async () => {
    const url = await downloadLink(target, "csv");
    const path = new URL(url).pathname;
    if (!path.endsWith(`/${idOf(filtered.r.uri)}/data`)) fail(`the CSV link ${path} is not the refined result's /data`);
    const response = await rest.get(url);
    if (response.status !== 200) fail(`GET the CSV link: ${response.status} ${await response.text()}`);
    const rows = (await rest.csvRecords(response)) - 1;
    if (rows !== filtered.total) fail(`the refined CSV has ${rows} rows, not ${filtered.total}`);
    return `${rows} rows from ${path}`;
  });

  if (target.mode === "apps") {
    await check("apps: Send to the model hands the refined result to the host (ui/update-model-context) with its uri", async () => {
      const before = await target.page.evaluate(() => window.__host.events.modelContexts.length);
      await frame.locator("#dv-to-model").click();
      await target.page.waitForFunction((n) => window.__host.events.modelContexts.length > n, before, { timeout: scaled(30_000) });
      const params = await target.page.evaluate(() => window.__host.events.modelContexts.at(-1));
      const text = (params.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
      for (const part of [filtered.r.uri, filterSql, String(filtered.total), parent.uri, "state (string)"])
        if (!text.includes(part)) fail(`the text for the model lacks ${JSON.stringify(part)}: ${JSON.stringify(text)}`);
      const sc = params.structuredContent?.refined_result;
      if (sc?.uri !== filtered.r.uri || sc?.total_count !== filtered.total || sc?.sql !== filterSql)
        fail(`structuredContent ${JSON.stringify(params.structuredContent).slice(0, 300)}`);
      const sent = (await refining.refinement(frame)).sentUri;
      if (sent !== filtered.r.uri) fail(`__dualView.refinement().sentUri is ${sent}`);
      return `${text.length} characters: ${JSON.stringify(text.split("\n")[0]).slice(0, 120)}…`;
    });
  }

  await check(`${label}: Back returns to the full result`, async () => {
    await frame.locator("#dv-back").click();
    const r = await refining.waitDepth(frame, 0);
    if (r.uri !== parent.uri || r.sql !== null) fail(`after Back the view shows ${JSON.stringify(r)}`);
    const t = await view.total(frame);
    if (t.attr !== String(parent.total)) fail(`after Back the total is ${t.attr}, not ${parent.total}`);
    await view.waitRow(frame, 2);
    const c = await refining.crumbs(frame);
    if (!c.hidden) fail(`the breadcrumb still shows: ${JSON.stringify(c)}`);
    return `${t.attr} rows of ${r.uri}`;
  });

  let grouped;
  await check(`${label}: group by a column (keyboard: G on its header) counts its rows: one row per group, the counts sum to the total`, async () => {
    await refining.groupBy(frame, "state", "enrollment");
    const sql = refining.groupSql("state", "enrollment");
    grouped = await sameAsServer(frame, parent, sql, ["state", "count", "sum"]);
    const all = await rest.ndjson(`${restBase(opt.demo, grouped.r.uri)}/data`, { keep: 100_000 });
    if (all.status !== 200) fail(`the grouped result's export: ${all.status} ${all.body}`);
    if (all.count !== grouped.total) fail(`the export has ${all.count} rows, the view ${grouped.total}`);
    const states = new Set(all.first.map((row) => row.state));
    if (states.size !== all.count) fail(`${all.count} rows for ${states.size} states: not one row per group`);
    const distinct = await refining.serverRefine(parent.rest, "SELECT COUNT(DISTINCT state) AS n FROM result");
    if (distinct.json?.results?.[0]?.n !== all.count) fail(`${all.count} groups, the result has ${JSON.stringify(distinct.json?.results)} distinct states`);
    const counted = all.first.reduce((sum, row) => sum + row.count, 0);
    if (counted !== parent.total) fail(`the counts sum to ${counted}, not the full result's ${parent.total}`);
    if (all.first.some((row, i) => i > 0 && row.count > all.first[i - 1].count)) fail("the groups are not the largest first");
    return `${all.count} groups, counts summing to ${counted}; the largest ${JSON.stringify(all.first[0])}`;
  });

  if (grouped) {
    await check(`${label}: a refinement of a refinement, then Back step by step`, async () => {
      await refining.filter(frame, "count > 100");
      const r = await refining.waitDepth(frame, 2);
      if (JSON.stringify(r.stack) !== JSON.stringify([parent.uri, grouped.r.uri])) fail(`the stack is ${JSON.stringify(r.stack)}`);
      const server = await refining.serverRefine(`${restBase(opt.demo, grouped.r.uri)}`, r.sql);
      if (server.status !== 201) fail(`the server's answer: ${server.status}`);
      const t = await view.total(frame);
      if (t.attr !== String(server.json.metadata.total_count)) fail(`the view shows ${t.attr} rows, the server ${server.json.metadata.total_count}`);
      const c = await refining.crumbs(frame);
      if (c.steps.length !== 2 || c.back !== "Back") fail(`the breadcrumb: ${JSON.stringify(c)}`);
      await frame.locator("#dv-back").click();
      const one = await refining.waitDepth(frame, 1);
      if (one.uri !== grouped.r.uri) fail(`the first Back shows ${one.uri}, not ${grouped.r.uri}`);
      const t1 = await view.total(frame);
      if (t1.attr !== String(grouped.total)) fail(`the first Back shows ${t1.attr} rows, not ${grouped.total}`);
      await frame.locator("#dv-back").click();
      const zero = await refining.waitDepth(frame, 0);
      if (zero.uri !== parent.uri) fail(`the second Back shows ${zero.uri}`);
      const t0 = await view.total(frame);
      if (t0.attr !== String(parent.total)) fail(`the second Back shows ${t0.attr} rows`);
      return `${t.attr} → ${t1.attr} → ${t0.attr} rows`;
    });
  }

  await check(`${label}: an SQL error is shown near the filter box, and the result stays`, async () => {
    const server = await refining.serverRefine(parent.rest, `SELECT * FROM result WHERE ${BAD_FILTER}`);
    if (server.status !== 400) fail(`control: the server answers ${server.status}, not 400`);
    await refining.filter(frame, BAD_FILTER);
    await frame.waitForFunction(() => !document.getElementById("dv-refine-error").hidden, null, { timeout: scaled(60_000) });
    const shown = await refining.errorShown(frame);
    if (!shown.includes("no_such_column") || !shown.includes("has the columns")) fail(`#dv-refine-error shows ${JSON.stringify(shown)}`);
    const r = await refining.refinement(frame);
    if (r.depth !== 0 || r.uri !== parent.uri || r.busy) fail(`after the error the view is ${JSON.stringify(r)}`);
    const t = await view.total(frame);
    if (t.attr !== String(parent.total)) fail(`after the error the total is ${t.attr}`);
    await view.waitRow(frame, 2);
    const state = await frame.evaluate(() => ({
      invalid: document.getElementById("dv-filter").getAttribute("aria-invalid"),
      role: document.getElementById("dv-refine-error").getAttribute("role"),
      error: document.getElementById("dv-error").hidden ? "" : document.getElementById("dv-error").textContent,
      status: document.getElementById("dv-status").getAttribute("data-status"),
    }));
    if (state.invalid !== "true" || state.role !== "alert" || state.error || state.status !== "ready") fail(JSON.stringify(state));
    return JSON.stringify(shown.slice(0, 140));
  });
}

// ---------------------------------------------------------------------------------------------------

let browser;
let hostJs;
const servers = [];
// SIGTERM (the Rust test's time limit): the summary of the checks so far, then Chromium closed (playwright
// starts it detached; its own SIGTERM handler closes it too, but does not end this process).
process.once("SIGTERM", () => {
  log("FAIL the browser tests were stopped by SIGTERM");
  summary();
  Promise.race([browser?.close(), sleep(3000)])
    .catch(() => {})
    .finally(() => process.exit(2));
});
try {
  hostJs = await bundleHost();
  browser = await launch();

  // ------------------------------------------------------------------ the main demo, Apps bridge
  const main = await startHostServer(opt.demo, hostJs);
  servers.push(main);
  const apps = await newContext(browser);
  const page = await apps.context.newPage();
  await page.goto(`${main.url}/host.html`);

  let big; // { uri, total, columns, rest }
  let exportLast;
  let opened;
  const okOpen = await check(`apps: the host opens the view of ${BIG_SQL} (tool call, ui:// resource, sandboxed iframe)`, async () => {
    opened = await openInHost(page, { sql: BIG_SQL, prompt: `Show me every degree awarded: ${BIG_SQL}` });
    big = { ...dualOf(opened.result), rest: null };
    big.rest = restBase(opt.demo, big.uri);
    if (big.total !== BIG_TOTAL) fail(`total_count ${big.total}, not ${BIG_TOTAL} (is the demo serving the default dataset?)`);
    await view.waitReady(opened.frame);
    await view.waitRow(opened.frame, 2);
    const sandbox = await page.getAttribute("iframe#view", "sandbox");
    if (sandbox !== "allow-scripts") fail(`iframe sandbox="${sandbox}"`);
    return `${opened.uri}, ${big.uri}, ${big.total} rows`;
  });
  if (okOpen) {
    await check("the REST export (NDJSON) of the result has total_count rows", async () => {
      const all = await rest.ndjson(`${big.rest}/data`);
      if (all.status !== 200) fail(`GET /data: ${all.status} ${all.body}`);
      if (all.count !== big.total) fail(`${all.count} rows, not ${big.total}`);
      exportLast = all.last;
      return `last row ${JSON.stringify(all.last)}`;
    });
    const target = {
      mode: "apps",
      page,
      frame: opened.frame,
      afterTotal: async () => {
        const path = opt.screenshot || process.env.DUAL_SCREENSHOT;
        if (!path) return;
        await check(`apps: the screenshot ${path}`, async () => {
          const file = resolve(process.cwd(), path);
          await mkdir(dirname(file), { recursive: true });
          await sleep(300);
          await page.screenshot({ path: file, clip: { x: 0, y: 0, width: 1000, height: 600 } });
          return file;
        });
      },
    };
    await bigResultChecks("apps", target, big, exportLast);

    await check("apps: the view reports its size (ui/notifications/size-changed)", async () => {
      const sizes = await page.evaluate(() => window.__host.events.sizeChanges);
      if (!sizes.length) fail("no size-changed notification");
      if (!sizes.some((s) => s.height > 0)) fail(`sizes ${JSON.stringify(sizes)}`);
      return `${sizes.length} notifications, last ${JSON.stringify(sizes.at(-1))}`;
    });
    await check("apps: fullscreen asks the host (ui/request-display-mode)", async () => {
      await opened.frame.locator("#dv-fullscreen").click();
      await page.waitForFunction(() => window.__host.events.displayModes.includes("fullscreen"), null, { timeout: scaled(10_000) });
      return "fullscreen requested";
    });
    await check("apps: the view follows the host's theme and style variables (ui/notifications/host-context-changed)", () =>
      interaction.followsHostTheme(page, opened.frame),
    );
    const okKeys = await check("apps: table semantics and keyboard navigation (arrows, Ctrl+End, Ctrl+Home)", () =>
      interaction.keyboardAndSemantics(page, opened.frame, big.total),
    );
    if (okKeys) await check("apps: copies the focused cell and row as text (Ctrl+C, Ctrl+Shift+C, Copy row)", () => interaction.copies(page, opened.frame));
    const complete = await profileChecks("apps", target, big);
    if (complete) {
      await check("apps: a profile in the tool result (structuredContent.profile) is shown without a read", async () => {
        const toolResult = { ...opened.result, structuredContent: { ...opened.result.structuredContent, profile: complete } };
        const again = await openInHost(page, { toolResult });
        await view.waitReady(again.frame);
        const said = await profile.waitState(again.frame, ["complete"], scaled(10_000));
        if (said.reads !== 0) fail(`the view read the profile ${said.reads} time(s) although the tool result carried it`);
        return `${await profile.headerHistogram(again.frame, complete, SORT_COLUMN)}; no read`;
      });
    }
  }

  await hostDownloadChecks(page, opt.demo);

  let refineParent;
  const okRefine = await check(`apps: the view of ${REFINE_SQL} offers to refine it`, async () => {
    const o = await openInHost(page, { sql: REFINE_SQL });
    refineParent = { ...dualOf(o.result), frame: o.frame };
    refineParent.rest = restBase(opt.demo, refineParent.uri);
    if (refineParent.total !== REFINE_TOTAL) fail(`total_count ${refineParent.total}, not ${REFINE_TOTAL}`);
    await view.waitReady(o.frame);
    await view.waitRow(o.frame, 2);
    const r = await refining.refinement(o.frame);
    if (!r.available || r.depth !== 0 || r.uri !== refineParent.uri) fail(`__dualView.refinement() ${JSON.stringify(r)}`);
    const shown = await o.frame.evaluate(() => !document.getElementById("dv-refine").hidden);
    if (!shown) fail("the refine controls (#dv-refine) are hidden");
    return `${refineParent.uri}, ${refineParent.total} rows`;
  });
  if (okRefine) await refineChecks("apps", { mode: "apps", page, frame: refineParent.frame }, refineParent);
  await check("apps: a host without updateModelContext is not offered Send to the model", async () => {
    const o = await openInHost(page, { sql: REFINE_SQL, modelContext: false });
    await view.waitReady(o.frame);
    await refining.filter(o.frame, FILTER);
    const r = await refining.waitDepth(o.frame, 1);
    const c = await refining.crumbs(o.frame);
    if (c.hidden || c.toModel) fail(`the breadcrumb ${JSON.stringify(c)}`);
    return `refined to ${r.uri}; no Send to the model`;
  });
  await check("apps: without a refine tool on the server the refine controls go, and the result stays", async () => {
    const o = await openInHost(page, { sql: REFINE_SQL, noRefine: true });
    await view.waitReady(o.frame);
    await refining.filter(o.frame, FILTER);
    await o.frame.waitForFunction(() => window.__dualView.refinement().available === false, null, { timeout: scaled(30_000) });
    const after = await o.frame.evaluate(() => ({
      controls: !document.getElementById("dv-refine").hidden,
      message: document.getElementById("dv-message").hidden ? "" : document.getElementById("dv-message").textContent,
      error: document.getElementById("dv-refine-error").hidden ? "" : document.getElementById("dv-refine-error").textContent,
      total: document.getElementById("dv-total").getAttribute("data-total"),
    }));
    if (after.controls || !/cannot refine/.test(after.message) || after.error || after.total !== String(REFINE_TOTAL))
      fail(JSON.stringify(after));
    return after.message;
  });

  await check("apps: the view of an HTML value", async () => {
    const html = await openInHost(page, { sql: HTML_SQL });
    await view.waitReady(html.frame);
    await htmlValueCheck("apps", html.frame);
  });
  await problemsCheck("apps: no console errors (host page and view)", apps.problems);

  // ------------------------------------------------------------------ the main demo, standalone page
  const standalone = await newContext(browser);
  const sPage = await standalone.context.newPage();
  if (okOpen) {
    let link;
    let frame;
    const okPage = await check("rest: the standalone page of the result (the link of dual_download_link with view: true)", async () => {
      link = await mintLink(page, undefined, { uri: big.uri, format: "csv", view: true });
      if (!new URL(link.url).pathname.endsWith(`/${idOf(big.uri)}/view`)) fail(`the view link is ${link.url}`);
      const response = await sPage.goto(link.url);
      if (response.status() !== 200) fail(`GET the view link: ${response.status()}`);
      const headers = response.headers();
      const csp = headers["content-security-policy"] ?? "";
      for (const part of ["default-src 'none'", "script-src 'sha256-", "connect-src 'self'", "frame-ancestors 'none'"])
        if (!csp.includes(part)) fail(`its Content-Security-Policy "${csp}" lacks ${part}`);
      if (headers["referrer-policy"] !== "no-referrer") fail(`Referrer-Policy ${headers["referrer-policy"]}`);
      frame = sPage.mainFrame();
      await view.waitReady(frame);
      await view.waitRow(frame, 2);
      return new URL(link.url).pathname;
    });
    if (okPage) {
      await bigResultChecks("rest", { mode: "rest", page: sPage, frame }, big, exportLast);
      await check("rest: the page follows the browser's colour scheme (prefers-color-scheme)", () =>
        interaction.followsColourScheme(sPage, frame),
      );
      const okKeys = await check("rest: table semantics and keyboard navigation (arrows, Ctrl+End, Ctrl+Home)", () =>
        interaction.keyboardAndSemantics(sPage, frame, big.total),
      );
      if (okKeys) await check("rest: copies the focused cell and row as text (Ctrl+C, Ctrl+Shift+C, Copy row)", () => interaction.copies(sPage, frame));
      await profileChecks("rest", { mode: "rest", page: sPage, frame }, big);
    }
  }
  await check("rest: the standalone page of an HTML value", async () => {
    const r = await page.evaluate((sql) => window.__host.callAs(undefined, "query", { sql }), HTML_SQL);
    const { uri } = dualOf(r);
    const link = await mintLink(page, undefined, { uri, format: "csv", view: true });
    const response = await sPage.goto(link.url);
    if (response.status() !== 200) fail(`GET the view link: ${response.status()}`);
    await view.waitReady(sPage.mainFrame());
    await htmlValueCheck("rest", sPage.mainFrame());
  });
  await problemsCheck("rest: no console errors (standalone page)", standalone.problems);
  if (okOpen) {
    // a context of its own: the 503s it routes are logged by Chromium as console errors, and only they may be
    const busy = await newContext(browser);
    const bPage = await busy.context.newPage();
    const okBusyPage = await check("rest: a standalone page for the busy answers", async () => {
      const link = await mintLink(page, undefined, { uri: big.uri, format: "csv", view: true });
      const response = await bPage.goto(link.url);
      if (response.status() !== 200) fail(`GET the view link: ${response.status()}`);
      await view.waitReady(bPage.mainFrame());
      await view.waitRow(bPage.mainFrame(), 2);
      return new URL(link.url).pathname;
    });
    if (okBusyPage) {
      await check("rest: a sorted page the server is too busy for is asked for again; the sort stays", () =>
        busySortCheck({ mode: "rest", page: bPage, frame: bPage.mainFrame() }, big),
      );
    }
    await check("rest: the busy page logged no console errors but the two 503s", () => {
      const other = [...new Set(busy.problems)].filter((p) => !/Failed to load resource: the server responded with a status of 503/.test(p));
      if (other.length) fail(`${other.length} other console error(s) or uncaught exception(s):\n  ${other.join("\n  ")}`);
      return `${busy.problems.length} logged 503(s), nothing else`;
    });
    await busy.context.close().catch(() => {});
  }
  // a context of its own: the SQL error's 400 is logged by Chromium as a console error, and only it may be
  const refinePage = await newContext(browser);
  const rfPage = await refinePage.context.newPage();
  let restParent;
  const okRefinePage = await check(`rest: the standalone page of ${REFINE_SQL} offers to refine it`, async () => {
    const r = await page.evaluate((sql) => window.__host.callAs(undefined, "query", { sql }), REFINE_SQL);
    restParent = dualOf(r);
    restParent.rest = restBase(opt.demo, restParent.uri);
    const link = await mintLink(page, undefined, { uri: restParent.uri, format: "csv", view: true });
    const response = await rfPage.goto(link.url);
    if (response.status() !== 200) fail(`GET the view link: ${response.status()}`);
    await view.waitReady(rfPage.mainFrame());
    await view.waitRow(rfPage.mainFrame(), 2);
    const shown = await rfPage.evaluate(() => !document.getElementById("dv-refine").hidden);
    if (!shown) fail("the refine controls (#dv-refine) are hidden");
    return new URL(link.url).pathname;
  });
  if (okRefinePage) await refineChecks("rest", { mode: "rest", page: rfPage, frame: rfPage.mainFrame() }, restParent);
  await check("rest: the refining page logged no console errors but the SQL error's 400", () => {
    const other = [...new Set(refinePage.problems)].filter((p) => !/Failed to load resource: the server responded with a status of 400/.test(p));
    if (other.length) fail(`${other.length} other console error(s) or uncaught exception(s):\n  ${other.join("\n  ")}`);
    return `${refinePage.problems.length} logged 400(s), nothing else`;
  });
  await refinePage.context.close().catch(() => {});
  await page.evaluate(() => window.__host.close());

  // ------------------------------------------------------------------ the live demo: a result without a profile
  if (opt["no-live"]) {
    log("NOTE --no-live: the checks of a result without a profile were left out");
  } else {
    const liveHost = await startHostServer(opt.live, hostJs);
    servers.push(liveHost);
    const live = await newContext(browser);
    const lPage = await live.context.newPage();
    await lPage.goto(`${liveHost.url}/host.html`);
    await check("live apps: a live result (no_profile) shows plain headers and no error", async () => {
      const o = await openInHost(lPage, { sql: SMALL_SQL });
      await view.waitReady(o.frame);
      await view.waitRow(o.frame, 2);
      return profile.noProfile(o.frame, true);
    });
    await check("live rest: the standalone page of a live result shows plain headers and asks no profile", async () => {
      const r = await lPage.evaluate((sql) => window.__host.callAs(undefined, "query", { sql }), SMALL_SQL);
      const link = await mintLink(lPage, undefined, { uri: dualOf(r).uri, format: "csv", view: true });
      const p = await live.context.newPage();
      const response = await p.goto(link.url);
      if (response.status() !== 200) fail(`GET the view link: ${response.status()}`);
      await view.waitReady(p.mainFrame());
      await view.waitRow(p.mainFrame(), 2);
      return profile.noProfile(p.mainFrame(), false);
    });
    await problemsCheck("live: no console errors (host page, view, standalone page)", live.problems);
    await lPage.evaluate(() => window.__host.close());
    await live.context.close().catch(() => {});
  }

  // ------------------------------------------------------------------ the secure demo: owners, pending, expiry
  if (opt["no-secure"]) {
    log("NOTE --no-secure: the pending, owner and expiry checks were left out");
  } else {
    const A = opt["token-a"];
    const B = opt["token-b"];
    const secure = await startHostServer(opt.secure, hostJs);
    servers.push(secure);
    const sApps = await newContext(browser);
    const hPage = await sApps.context.newPage();
    await hPage.goto(`${secure.url}/host.html`);
    // Expected 404 navigations log "Failed to load resource" errors: they run in a context of their own.
    const negative = await newContext(browser);

    // Owner B's resource.
    let bUri;
    await check("secure: owner b creates a resource", async () => {
      const r = await hPage.evaluate(({ token, sql }) => window.__host.callAs(token, "query", { sql }), { token: B, sql: SMALL_SQL });
      bUri = dualOf(r).uri;
      return bUri;
    });

    // The two slow queries (Apps, and the standalone page) run at once: each costs about 15 s of one
    // core, and on a loaded 2-core machine two of them in parallel take about as long as one.
    // Apps: pending, then owner checks and an expiring link in the same view of owner a.
    let o;
    let d;
    const okSlow = await check("secure apps: the host opens the view of a slow query as owner a", async () => {
      o = await openInHost(hPage, { token: A, sql: SLOW_SQL });
      d = dualOf(o.result);
      return `${d.uri}: ${d.status}`;
    });
    // REST: the pending page, as a standalone page.
    const sRest = await newContext(browser);
    const rPage = await sRest.context.newPage();
    let slow;
    // Authorized by owner a's bearer token, not by a view link: the secure demo's links expire within
    // seconds, possibly before the slow query ends (a page opened from a link stops working when its link
    // expires).
    const okSlowPage = await check("secure rest: the standalone page of a slow query (as owner a, Authorization header)", async () => {
      const r = await hPage.evaluate(({ token, sql }) => window.__host.callAs(token, "query", { sql }), { token: A, sql: SLOW_SQL });
      slow = dualOf(r);
      await rPage.setExtraHTTPHeaders({ authorization: `Bearer ${A}` });
      const url = `${restBase(opt.secure, slow.uri)}/view`;
      const response = await rPage.goto(url);
      if (response.status() !== 200) fail(`GET ${url}: ${response.status()}`);
      return new URL(url).pathname;
    });
    const lastRowAsA = (uri) => async () => {
      const r = await rest.ndjson(`${restBase(opt.secure, uri)}/data?offset=${SLOW_ROWS - 1}&limit=1`, {
        headers: { authorization: `Bearer ${A}` },
        keep: 1,
      });
      if (r.status !== 200) fail(`export as a: ${r.status} ${r.body}`);
      return r.first[0];
    };
    await Promise.all([
      okSlow ? pendingCheck("secure apps", o.frame, d.status, lastRowAsA(d.uri)) : null,
      okSlowPage ? pendingCheck("secure rest", rPage.mainFrame(), slow.status, lastRowAsA(slow.uri)) : null,
    ]);

    if (okSlow) {
      await check("secure apps: the bridge's resources/read of owner b's resource as owner a is not found", async () => {
        const own = await bridgeCall(o.frame, "resources/read", { uri: `${d.uri}?offset=0&limit=5` });
        if (!own.result) fail(`control: reading a's own resource through the bridge failed: ${JSON.stringify(own).slice(0, 300)}`);
        const other = await bridgeCall(o.frame, "resources/read", { uri: `${bUri}?offset=0&limit=5` });
        if (other.result) fail(`b's resource was read as a: ${JSON.stringify(other.result).slice(0, 300)}`);
        if (!other.error || !/not found/i.test(JSON.stringify(other.error))) fail(`answered ${JSON.stringify(other).slice(0, 300)}`);
        const link = await bridgeCall(o.frame, "tools/call", { name: "dual_download_link", arguments: { uri: bUri, format: "csv" } });
        if (!link.result?.isError || !/not found/i.test(JSON.stringify(link.result)))
          fail(`dual_download_link of b's resource as a answered ${JSON.stringify(link).slice(0, 300)}`);
        return `resources/read: ${JSON.stringify(other.error).slice(0, 120)}`;
      });

      await check("secure apps: an expired download link is 404", async () => {
        // the download buttons are aria-disabled (and playwright does not click them) until the result is
        // ready: a view still pending here is the pending check's failure, said as such
        const st = await view.status(o.frame);
        if (st?.status !== "ready") fail(`the view is ${JSON.stringify(st)}, not ready: its download buttons are disabled until the query ends`);
        const url = await downloadLink({ mode: "apps", page: hPage, frame: o.frame }, "csv");
        const expiresMs = expiresOf(url);
        // a retry (503 or 409 with Retry-After) only while the link is still fresh
        const now = await rest.get(url, { until: expiresMs - 500 });
        await now.body?.cancel();
        if (now.status !== 200) fail(`the fresh link got ${now.status} (after ${now.retried} retries)`);
        await untilExpired(expiresMs);
        const later = await rest.get(url);
        const body = await later.text();
        if (later.status !== 404) fail(`the expired link got ${later.status}`);
        return `200, then 404 after expiry (${body.slice(0, 80)})`;
      });
    }
    await problemsCheck("secure apps: no console errors", sApps.problems);
    await hPage.evaluate(() => window.__host.close());

    // REST: owner 404s and expiry, each as a standalone page.
    await problemsCheck("secure rest: no console errors", sRest.problems);

    await check("secure rest: owner b's page as owner a is 404; b's view link with a's id is 404", async () => {
      const idB = idOf(bUri);
      const asA = await negative.context.newPage();
      await asA.setExtraHTTPHeaders({ authorization: `Bearer ${A}` });
      const r1 = await asA.goto(`${opt.secure.replace(/\/$/, "")}/resources/${idB}/view`);
      if (r1.status() !== 404) fail(`GET /resources/{b's id}/view as a: ${r1.status()}`);
      const asB = await negative.context.newPage();
      await asB.setExtraHTTPHeaders({ authorization: `Bearer ${B}` });
      const r2 = await asB.goto(`${opt.secure.replace(/\/$/, "")}/resources/${idB}/view`);
      if (r2.status() !== 200) fail(`control: the same page as b: ${r2.status()}`);
      const aRes = dualOf(await hPage.evaluate(({ token, sql }) => window.__host.callAs(token, "query", { sql }), { token: A, sql: SMALL_SQL }));
      // minted last: the link is fresh (it lives seconds), so a 404 is the other id's, not the expiry's
      const bLink = await mintLink(hPage, B, { uri: bUri, format: "csv", view: true });
      const bExpires = expiresOf(bLink.url);
      const control = await rest.get(bLink.url, { until: bExpires - 500 });
      await control.body?.cancel();
      if (control.status !== 200) fail(`control: b's fresh view link: ${control.status} (after ${control.retried} retries)`);
      const swapped = bLink.url.replace(`/${idB}/view`, `/${idOf(aRes.uri)}/view`);
      const plain = await negative.context.newPage();
      const r3 = await plain.goto(swapped);
      if (r3.status() !== 404) fail(`b's view token on a's id: ${r3.status()}`);
      // a 404 after the link's expiry would prove nothing about the other id
      if (Date.now() >= bExpires) fail("b's view link expired before its token was tried on a's id: inconclusive (a slow machine?)");
      return "404, 404 (b itself: 200)";
    });

    await check("secure rest: an expired view link is 404, and so is its data link", async () => {
      const aRes = dualOf(await hPage.evaluate(({ token, sql }) => window.__host.callAs(token, "query", { sql }), { token: A, sql: SMALL_SQL }));
      const link = await mintLink(hPage, A, { uri: aRes.uri, format: "csv", view: true });
      const expiresMs = expiresOf(link.url);
      const p = await negative.context.newPage();
      const first = await p.goto(link.url);
      if (first.status() !== 200) fail(`the fresh view link: ${first.status()}`);
      await view.waitReady(p.mainFrame());
      const csv = await downloadLink({ mode: "rest", page: p, frame: p.mainFrame() }, "csv");
      await untilExpired(Math.max(expiresMs, expiresOf(csv)));
      const again = await p.goto(link.url);
      if (again.status() !== 404) fail(`the expired view link: ${again.status()}`);
      const data = await rest.get(csv);
      await data.body?.cancel();
      if (data.status !== 404) fail(`the expired page's data link: ${data.status}`);
      return "200, then 404 and 404";
    });

    await check("secure rest: a page opened from a view link says the link does not grant refining, and the controls go", async () => {
      const aRes = dualOf(await hPage.evaluate(({ token, sql }) => window.__host.callAs(token, "query", { sql }), { token: A, sql: SMALL_SQL }));
      const link = await mintLink(hPage, A, { uri: aRes.uri, format: "csv", view: true });
      const p = await negative.context.newPage();
      const first = await p.goto(link.url);
      if (first.status() !== 200) fail(`the fresh view link: ${first.status()}`);
      const frame = p.mainFrame();
      await view.waitReady(frame);
      if (!(await refining.refinement(frame)).available) fail("the controls are gone before the server was asked");
      await refining.filter(frame, "id > 0");
      await frame.waitForFunction(() => window.__dualView.refinement().available === false, null, { timeout: scaled(30_000) });
      const shown = await frame.evaluate(() => ({
        controls: !document.getElementById("dv-refine").hidden,
        message: document.getElementById("dv-message").hidden ? "" : document.getElementById("dv-message").textContent,
        error: document.getElementById("dv-refine-error").hidden ? "" : document.getElementById("dv-refine-error").textContent,
        rows: window.__dualView.refinement().depth,
      }));
      if (shown.controls) fail("the refine controls still show");
      if (!/link lets you read the result, not refine it/.test(shown.message)) fail(`the message is ${JSON.stringify(shown.message)}`);
      if (shown.error || shown.rows !== 0) fail(`an error shows (${JSON.stringify(shown.error)}) or the view moved (depth ${shown.rows})`);
      return shown.message;
    });
  }
} catch (e) {
  results.push({ name: "the run", ok: false, error: e?.stack ?? String(e) });
  log(`FAIL the run stopped: ${e?.stack ?? e}`);
} finally {
  clearTimeout(watchdog);
  await browser?.close().catch(() => {});
  for (const s of servers) await s.close().catch(() => {});
}

process.exit(summary() ? 1 : 0);

/** Sends one JSON-RPC request from inside the view's frame to the host bridge and returns the answer. */
async function bridgeCall(frame, method, params) {
  return frame.evaluate(
    ({ method, params, limitMs }) =>
      new Promise((resolve) => {
        const id = `browser-test-${Math.random().toString(36).slice(2)}`;
        const timer = setTimeout(() => resolve({ timeout: true }), limitMs);
        const onMessage = (event) => {
          if (event.source !== window.parent || event.data?.id !== id) return;
          window.removeEventListener("message", onMessage);
          clearTimeout(timer);
          resolve(event.data);
        };
        window.addEventListener("message", onMessage);
        window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
      }),
    { method, params, limitMs: scaled(30_000) },
  );
}
