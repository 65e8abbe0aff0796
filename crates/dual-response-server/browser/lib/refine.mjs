// Refining in the view (docs/DESIGN.md §4, "Refining a result"): the filter box, the group-by controls,
// Back and the breadcrumb, the SQL's errors shown inline and, in an MCP Apps host, "Send to the model"
// (`ui/update-model-context`). The view's hooks: #dv-filter (Enter applies), #dv-group-col, #dv-group-sum,
// #dv-group-apply, G on a focused header, #dv-crumbs with #dv-back and #dv-to-model, #dv-refine-error, and
// `window.__dualView.refinement()` ({available, busy, depth, uri, sql, stack, sentUri}).
// The server's answer to the same SQL is read with `POST /resources/{id}/query` (201, or 400 with the
// engine's message).

import { scaled } from "./timing.mjs";

/** `window.__dualView.refinement()` of the view in `frame`. */
export function refinement(frame) {
  return frame.evaluate(() => window.__dualView.refinement());
}

/**
 * Waits until the view shows a result `depth` refinements deep that is no longer being refined and is
 * ready (or failed); returns its refinement().
 */
export async function waitDepth(frame, depth, timeout = scaled(60_000)) {
  await frame.waitForFunction(
    (depth) => {
      const r = window.__dualView.refinement();
      const status = document.getElementById("dv-status")?.getAttribute("data-status");
      return !r.busy && r.depth === depth && (status === "ready" || status === "failed");
    },
    depth,
    { timeout },
  );
  return refinement(frame);
}

/** Types `condition` into the filter box and presses Enter. */
export async function filter(frame, condition) {
  const input = frame.locator("#dv-filter");
  await input.fill(condition);
  await input.press("Enter");
}

/**
 * Groups by `column` from the keyboard: focus on its header, G (the group-by controls take the focus with
 * the column chosen), `sum` chosen as the column to sum, then Count. Fails unless G moved the focus there.
 */
export async function groupBy(frame, column, sum) {
  const header = frame.locator(`#dv-grid [role=columnheader][data-column="${column}"]`);
  await header.focus();
  await header.press("g");
  const focused = await frame.evaluate(() => ({ id: document.activeElement?.id, value: document.activeElement?.value }));
  if (focused.id !== "dv-group-col" || focused.value !== column) {
    throw new Error(`G on the header of ${column} focused ${JSON.stringify(focused)}, not #dv-group-col with ${column}`);
  }
  await frame.locator("#dv-group-sum").selectOption(sum ?? "");
  await frame.locator("#dv-group-apply").press("Enter");
}

/** The visible text of #dv-refine-error ("" while hidden). */
export function errorShown(frame) {
  return frame.evaluate(() => {
    const e = document.getElementById("dv-refine-error");
    return e && !e.hidden ? e.textContent : "";
  });
}

/** What the breadcrumb shows: hidden, Back's text, the earlier steps and the current one, and the model button. */
export function crumbs(frame) {
  return frame.evaluate(() => {
    const nav = document.getElementById("dv-crumbs");
    return {
      hidden: nav.hidden,
      back: document.getElementById("dv-back").textContent,
      steps: [...nav.querySelectorAll(".dv-crumb")].map((b) => b.textContent),
      here: nav.querySelector("[aria-current=step]")?.textContent ?? null,
      toModel: !document.getElementById("dv-to-model").hidden,
    };
  });
}

/**
 * The server's answer to `sql` over the result at `restBase` (`POST {restBase}/query`): `{status, json}`;
 * 201 carries the refined result's structured content.
 */
export async function serverRefine(restBase, sql, headers = {}) {
  const response = await fetch(`${restBase}/query`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify({ sql }),
    signal: AbortSignal.timeout(scaled(60_000)),
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = { text };
  }
  return { status: response.status, json };
}

/** The SQL the view sends for a group-by of `column` with the sum of `sum` (its documented shape). */
export function groupSql(column, sum) {
  const q = (name) => `"${name.replace(/"/g, '""')}"`;
  return (
    `SELECT ${q(column)}, COUNT(*) AS "count"${sum ? `, SUM(${q(sum)}) AS "sum"` : ""} FROM result ` +
    `GROUP BY ${q(column)} ORDER BY "count" DESC, ${q(column)}`
  );
}
