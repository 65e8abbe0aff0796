// Plain HTTP from Node for the checks: the REST exports the view's rows are compared with, and the
// download links the view hands out.

const TIMEOUT_MS = 60_000;

/** fetch with a time limit. */
export async function get(url, { headers = {}, method = "GET" } = {}) {
  return fetch(url, { headers, method, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
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

/** An NDJSON export: `{ status, count, first: rows, last: row }`. */
export async function ndjson(url, { headers = {}, keep = 0 } = {}) {
  const response = await get(url, { headers: { accept: "application/x-ndjson", ...headers } });
  if (response.status !== 200) return { status: response.status, body: await response.text() };
  const { count, first, last } = await lines(response, keep);
  return { status: 200, count, first: first.map((l) => JSON.parse(l)), last: last === null ? null : JSON.parse(last) };
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
