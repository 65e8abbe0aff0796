// Reading and driving the result view through the DOM hooks of the contract (docs: plan of issue 22):
// #dv-total[data-total], #dv-status[data-status], #dv-grid[role=grid][aria-rowcount], rows
// [role=row][aria-rowindex] (1-based, the header row is 1), cells [role=gridcell], header cells
// [role=columnheader][data-column] (click sorts, aria-sort), #dv-jump, #dv-download-csv, #dv-download-ndjson,
// #dv-fullscreen, #dv-error, #dv-message[data-kind], and window.__dualView {ready, stats() (domRows, cachedPages,
// pagesFetched, busyRetries), lastPaint, scrollToRow(n)}.
// `frame` is a playwright Frame: the iframe of the host page (Apps bridge) or the standalone page's main frame.
// Every time limit here is scaled by DUAL_BROWSER_TIME_SCALE (lib/timing.mjs).

import { scaled } from "./timing.mjs";

/** Waits for `window.__dualView` and its `ready` promise. */
export async function waitReady(frame, timeout = scaled(30_000)) {
  await frame.waitForFunction(() => typeof window.__dualView === "object" && window.__dualView !== null, null, { timeout });
  await frame.evaluate(() => Promise.resolve(window.__dualView.ready).then(() => true));
}

/** `{attr, text, digits}` of #dv-total. */
export async function total(frame) {
  return frame.evaluate(() => {
    const el = document.getElementById("dv-total");
    if (!el) return null;
    return { attr: el.getAttribute("data-total"), text: el.textContent, digits: el.textContent.replace(/\D/g, "") };
  });
}

/** `{status, text}` of #dv-status. */
export async function status(frame) {
  return frame.evaluate(() => {
    const el = document.getElementById("dv-status");
    return el ? { status: el.getAttribute("data-status"), text: el.textContent.trim() } : null;
  });
}

/** aria-rowcount of #dv-grid, as a number (NaN when absent). */
export async function ariaRowCount(frame) {
  return frame.evaluate(() => Number(document.getElementById("dv-grid")?.getAttribute("aria-rowcount")));
}

/** The column names of the header cells, in order. */
export async function columnNames(frame) {
  return frame.evaluate(() =>
    [...document.querySelectorAll('#dv-grid [role=columnheader]')].map((h) => h.getAttribute("data-column")),
  );
}

/** The texts of the cells of the row with aria-rowindex `rowIndex`, or null when it is not in the DOM. */
export async function rowCells(frame, rowIndex) {
  return frame.evaluate((i) => {
    const row = document.querySelector(`#dv-grid [role=row][aria-rowindex="${i}"]`);
    if (!row) return null;
    return [...row.querySelectorAll("[role=gridcell]")].map((c) => c.textContent);
  }, rowIndex);
}

/** Waits until the row with aria-rowindex `rowIndex` is in the DOM with its cells filled. */
export async function waitRow(frame, rowIndex, timeout = scaled(30_000)) {
  await frame.waitForFunction(
    (i) => {
      const row = document.querySelector(`#dv-grid [role=row][aria-rowindex="${i}"]`);
      if (!row) return false;
      const cells = row.querySelectorAll("[role=gridcell]");
      return cells.length > 0 && [...cells].some((c) => c.textContent.length > 0);
    },
    rowIndex,
    { timeout, polling: "raf" },
  );
  return rowCells(frame, rowIndex);
}

/** `__dualView.stats()` plus the [role=row] elements counted in the DOM. */
export async function stats(frame) {
  return frame.evaluate(() => ({
    ...window.__dualView.stats(),
    rowElements: document.querySelectorAll("#dv-grid [role=row]").length,
    lastPaint: window.__dualView.lastPaint,
  }));
}

/** The element that scrolls the grid: #dv-grid or the nearest ancestor or descendant that scrolls. */
export async function scrollBy(frame, how) {
  return frame.evaluate((how) => {
    const grid = document.getElementById("dv-grid");
    const scrolls = (el) => el && el.scrollHeight > el.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(el).overflowY);
    let el = grid;
    while (el && !scrolls(el)) el = el.parentElement;
    if (!el) el = [...grid.querySelectorAll("*")].find(scrolls) ?? document.scrollingElement;
    const before = el.scrollTop;
    if (how.to === "bottom") el.scrollTop = el.scrollHeight;
    else if (how.to === "top") el.scrollTop = 0;
    else if (typeof how.fraction === "number") el.scrollTop = how.fraction * (el.scrollHeight - el.clientHeight);
    else if (typeof how.by === "number") el.scrollTop = before + how.by;
    el.dispatchEvent(new Event("scroll"));
    return { before, after: el.scrollTop, scrollHeight: el.scrollHeight, clientHeight: el.clientHeight, id: el.id || el.tagName };
  }, how);
}

/** Types `row` into #dv-jump and presses Enter. */
export async function jumpTo(frame, row) {
  const input = frame.locator("#dv-jump");
  await input.fill(String(row));
  await input.press("Enter");
}

/** Clicks the header of `column` until its aria-sort is `wanted` (ascending | descending), at most 3 clicks. */
export async function sortBy(frame, column, wanted) {
  const header = frame.locator(`#dv-grid [role=columnheader][data-column="${column}"]`);
  for (let i = 0; i < 3; i++) {
    const previous = await header.getAttribute("aria-sort");
    if (previous === wanted) return;
    await header.click();
    await frame
      .waitForFunction(
        ({ column, previous }) =>
          document.querySelector(`#dv-grid [role=columnheader][data-column="${column}"]`)?.getAttribute("aria-sort") !== previous,
        { column, previous },
        { timeout: scaled(10_000) },
      )
      .catch(() => {});
  }
  const now = await header.getAttribute("aria-sort");
  if (now !== wanted) throw new Error(`after 3 clicks on the header of ${column}, aria-sort is ${now}, not ${wanted}`);
}

/**
 * Whether a cell's text shows `value` (a JSON value of the export): null as an empty cell (or a dash or
 * "null"), everything else as its text; a number may carry grouping separators.
 */
export function sameValue(text, value) {
  const shown = text.trim();
  if (value === null || value === undefined) return ["", "null", "NULL", "—", "-", "∅"].includes(shown);
  const plain = typeof value === "string" ? value : JSON.stringify(value);
  if (text === plain || shown === plain) return true;
  if (typeof value === "number") return shown.replace(/[,\s\u00a0\u202f']/g, "") === plain;
  return false;
}

/** Throws unless `cells` (texts, in the header's order `columns`) show the export row `row`. */
export function assertRow(cells, columns, row, what) {
  if (!cells) throw new Error(`${what}: the row is not in the DOM`);
  if (!columns?.length) throw new Error(`${what}: no columns to compare (the header or the metadata names none)`);
  const bad = columns
    .map((c, i) => ({ c, shown: cells[i], want: row[c] }))
    .filter(({ shown, want }) => shown === undefined || !sameValue(shown, want));
  if (bad.length) {
    throw new Error(
      `${what}: ${bad.map(({ c, shown, want }) => `${c} shows ${JSON.stringify(shown)}, the export has ${JSON.stringify(want)}`).join("; ")}`,
    );
  }
}
