// Plain HTTP from Node for the checks: the REST exports the view's rows are compared with, and the
// download links the view hands out.

import { scaled } from "./timing.mjs";

/** Time limit of one request (its headers and its body). */
const TIMEOUT_MS = scaled(60_000);
/** Most retries of one read after a retryable answer (so at most 1 + RETRY_ATTEMPTS requests). */
export const RETRY_ATTEMPTS = 6;
/** Most time one read spends waiting between its retries, in total. */
export const RETRY_BUDGET_MS = scaled(30_000);
/** Bounds on one wait: Retry-After is whole seconds (0 is allowed); an absurd one is cut. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * Every retry the reads of this run made, `{url, status, code, waitMs}` (run.mjs prints them).
 * @type {Array<{url: string, status: number, code: string, waitMs: number}>}
 */
export const retries = [];

/**
 * Whether a response is one a client retries: 503 (`overloaded`, `storage_error`) or 409 (`not_ready`)
 * with the `Retry-After` the server sends with them. Anything else (404, 400, 500, …) is the answer.
 */
export function retryable(response) {
  return (response.status === 503 || response.status === 409) && response.headers.has("retry-after");
}

/** `Retry-After` in ms (delta-seconds; an HTTP date is honoured too), bounded to 250 ms–10 s. */
export function retryAfterMs(response, now = Date.now()) {
  const value = (response.headers.get("retry-after") ?? "").trim();
  let ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) ms = 1000;
  return Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, ms));
}

/**
 * fetch with a time limit, retried as a client does when the server says to come back later: a 503 or
 * 409 with `Retry-After` is read (its error code recorded in `retries`), then asked again after
 * Retry-After, at most RETRY_ATTEMPTS times and RETRY_BUDGET_MS of waiting in all, and never past
 * `until` (ms since the epoch, e.g. a link's expiry: a retry after it would test something else). The
 * last answer is returned whatever it is, so a check still sees (and reports) a 503 that outlasted the
 * retries; `response.retried` says how many retries it took. `retry: false` asks once.
 */
export async function get(url, { headers = {}, method = "GET", retry = true, until = Infinity } = {}) {
  let waited = 0;
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, { headers, method, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
    response.retried = attempt;
    if (!retry || !retryable(response) || attempt >= RETRY_ATTEMPTS) return response;
    const waitMs = retryAfterMs(response);
    if (waited + waitMs > RETRY_BUDGET_MS || Date.now() + waitMs > until) return response;
    const body = await response.text().catch(() => "");
    let code = "";
    try {
      code = JSON.parse(body).error ?? "";
    } catch {
      code = body.slice(0, 40);
    }
    retries.push({ url: new URL(url).pathname + new URL(url).search.replace(/token=[^&]*/, "token=…"), status: response.status, code, waitMs });
    await new Promise((r) => setTimeout(r, waitMs));
    waited += waitMs;
  }
}

/** Streams a body line by line: `{ count, first: [..keep], last }` of its non-empty lines. */
export async function lines(response, keep = 0) {
  const decoder = new TextDecoder();
  let rest = "";
  let count = 0;
  const first = [];
  let last = null;
  const take = (line) => {
    if (line.length === 0) return;
    count += 1;
    if (first.length < keep) first.push(line);
    last = line;
  };
  for await (const chunk of response.body) {
    rest += decoder.decode(chunk, { stream: true });
    let at;
    while ((at = rest.indexOf("\n")) >= 0) {
      take(rest.slice(0, at).replace(/\r$/, ""));
      rest = rest.slice(at + 1);
    }
  }
  take((rest + decoder.decode()).replace(/\r$/, ""));
  return { count, first, last };
}

/**
 * An NDJSON export: `{ status, count, first: rows, last: row, retried }` (a 503 or 409 with Retry-After
 * retried as `get` does; `retried` counts the retries).
 */
export async function ndjson(url, { headers = {}, keep = 0 } = {}) {
  const response = await get(url, { headers: { accept: "application/x-ndjson", ...headers } });
  const retried = response.retried;
  if (response.status !== 200) return { status: response.status, body: await response.text(), retried };
  const { count, first, last } = await lines(response, keep);
  return { status: 200, count, first: first.map((l) => JSON.parse(l)), last: last === null ? null : JSON.parse(last), retried };
}

/** Counts the records of a CSV body (RFC 4180: quoted fields may hold newlines), header included. */
export async function csvRecords(response) {
  const decoder = new TextDecoder();
  let records = 0;
  let quoted = false;
  let fieldStarted = false;
  const scan = (text) => {
    for (const ch of text) {
      if (ch === '"') quoted = !quoted;
      else if (ch === "\n" && !quoted) {
        records += 1;
        fieldStarted = false;
        continue;
      }
      if (ch !== "\r") fieldStarted = true;
    }
  };
  for await (const chunk of response.body) scan(decoder.decode(chunk, { stream: true }));
  scan(decoder.decode());
  if (fieldStarted) records += 1; // a last record without a newline
  return records;
}

/** Changes one character of the `token` parameter of `url`. */
export function tamperToken(url) {
  const u = new URL(url);
  const token = u.searchParams.get("token") ?? "";
  if (!token) throw new Error(`no token in ${url}`);
  const i = Math.floor(token.length / 2);
  u.searchParams.set("token", token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1));
  return u.toString();
}

/** Sets (or replaces) one query parameter of `url`. */
export function withParam(url, name, value) {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}
