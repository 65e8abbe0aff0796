// What a person does with the view besides scrolling: the host's theme, the keyboard, copying.
// Each function throws (with what it saw) when the view does not do it; run.mjs wraps them in checks.
// `frame` is a playwright Frame of the view; `page` the page that holds it (the host page or the
// standalone page). Time limits are scaled by DUAL_BROWSER_TIME_SCALE (lib/timing.mjs).

import { scaled } from "./timing.mjs";

/** The colours the view paints its body with, and the theme it says it shows. */
function colours(frame) {
  return frame.evaluate(() => {
    const body = getComputedStyle(document.body);
    return { theme: document.documentElement.dataset.theme ?? null, bg: body.backgroundColor, text: body.color };
  });
}

function expectColours(seen, bg, text, what) {
  if (seen.bg !== bg || seen.text !== text) {
    throw new Error(`${what}: background ${seen.bg}, text ${seen.text}; expected ${bg} on ${text}`);
  }
}

/**
 * Apps: the host switches to a dark theme with its own style variables, then back to light; the view
 * takes the theme and paints with the host's colours each time.
 * @param {import("playwright-core").Page} page the host page (`window.__host`)
 */
export async function followsHostTheme(page, frame) {
  const dark = { "--color-background-primary": "#101418", "--color-text-primary": "#e6edf3" };
  const light = { "--color-background-primary": "#ffffff", "--color-text-primary": "#1f2328" };
  const before = await colours(frame);
  expectColours(before, "rgb(255, 255, 255)", "rgb(31, 35, 40)", "the light host context it opened with");
  await page.evaluate((variables) => window.__host.setHostContext({ theme: "dark", styles: { variables } }), dark);
  await frame.waitForFunction(() => document.documentElement.dataset.theme === "dark", null, { timeout: scaled(10_000) });
  expectColours(await colours(frame), "rgb(16, 20, 24)", "rgb(230, 237, 243)", "after the host's dark context");
  await page.evaluate((variables) => window.__host.setHostContext({ theme: "light", styles: { variables } }), light);
  await frame.waitForFunction(() => document.documentElement.dataset.theme === "light", null, { timeout: scaled(10_000) });
  expectColours(await colours(frame), "rgb(255, 255, 255)", "rgb(31, 35, 40)", "back in the host's light context");
  return "light → dark → light, the host's colours each time";
}

/**
 * Standalone page: no host, so the view follows the browser's colour scheme with its own palettes.
 * @param {import("playwright-core").Page} page the standalone page
 */
export async function followsColourScheme(page, frame) {
  await page.emulateMedia({ colorScheme: "dark" });
  try {
    await frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor !== "rgb(255, 255, 255)", null, {
      timeout: scaled(10_000),
    });
    const dark = await colours(frame);
    expectColours(dark, "rgb(28, 29, 33)", "rgb(232, 234, 237)", "under prefers-color-scheme: dark");
  } finally {
    await page.emulateMedia({ colorScheme: "light" });
  }
  await frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor === "rgb(255, 255, 255)", null, {
    timeout: scaled(10_000),
  });
  return "dark palette under prefers-color-scheme: dark, light again after";
}

/** Where the keyboard focus is: the 1-based aria-rowindex and aria-colindex of the focused cell. */
function focusedCell(frame) {
  return frame.evaluate(() => {
    const cell = document.activeElement;
    const row = cell?.closest?.("[role=row]");
    return {
      role: cell?.getAttribute?.("role") ?? null,
      row: Number(row?.getAttribute("aria-rowindex")),
      col: Number(cell?.getAttribute?.("aria-colindex")),
      text: cell?.textContent ?? null,
    };
  });
}

async function waitFocus(frame, row, col, what) {
  try {
    await frame.waitForFunction(
      ({ row, col }) => {
        const cell = document.activeElement;
        const r = cell?.closest?.("[role=row]");
        return (
          cell?.getAttribute?.("role") === "gridcell" &&
          Number(r?.getAttribute("aria-rowindex")) === row &&
          Number(cell.getAttribute("aria-colindex")) === col &&
          !r.hasAttribute("aria-busy")
        );
      },
      { row, col },
      { timeout: scaled(15_000) },
    );
  } catch {
    throw new Error(`${what}: the focus is on ${JSON.stringify(await focusedCell(frame))}, not row ${row}, column ${col}`);
  }
}

/**
 * Table semantics a screen reader reads (grid, rows, column headers, cells with their indices), then the
 * keyboard: a click focuses a cell; arrows move it; Ctrl+End reaches the last row of the whole result
 * (its page fetched on the way); Ctrl+Home comes back to the first cell.
 * @param {number} total the result's total_count
 */
export async function keyboardAndSemantics(page, frame, total) {
  const semantics = await frame.evaluate(() => {
    const grid = document.getElementById("dv-grid");
    const rows = [...grid.querySelectorAll("[role=row]")];
    const cells = [...grid.querySelectorAll("[role=gridcell]")];
    return {
      role: grid.getAttribute("role"),
      labelled: Boolean(document.getElementById(grid.getAttribute("aria-labelledby") ?? "")?.textContent),
      rowcount: Number(grid.getAttribute("aria-rowcount")),
      colcount: Number(grid.getAttribute("aria-colcount")),
      headers: grid.querySelectorAll("[role=row] > [role=columnheader]").length,
      // a pooled row not in use is hidden, and so not read; every shown row has its index
      rowsWithoutIndex: rows.filter((r) => !r.hidden && !r.getAttribute("aria-rowindex")).length,
      strayCells: cells.filter((c) => c.parentElement?.getAttribute("role") !== "row" || !c.getAttribute("aria-colindex")).length,
    };
  });
  if (semantics.role !== "grid") throw new Error(`#dv-grid has role ${semantics.role}`);
  if (!semantics.labelled) throw new Error("the grid has no label (aria-labelledby)");
  if (semantics.rowcount !== total + 1) throw new Error(`aria-rowcount ${semantics.rowcount}, not ${total + 1}`);
  if (!(semantics.colcount > 1) || semantics.headers !== semantics.colcount) {
    throw new Error(`aria-colcount ${semantics.colcount}, ${semantics.headers} column headers`);
  }
  if (semantics.rowsWithoutIndex || semantics.strayCells) {
    throw new Error(`${semantics.rowsWithoutIndex} rows without aria-rowindex, ${semantics.strayCells} cells outside a row or without aria-colindex`);
  }

  await frame.evaluate(() => window.__dualView.scrollToRow(1));
  await frame.locator('#dv-grid [role=row][aria-rowindex="2"] [role=gridcell][aria-colindex="1"]').click();
  await waitFocus(frame, 2, 1, "a click on the first cell");
  for (let i = 0; i < 3; i += 1) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  await waitFocus(frame, 5, 2, "three ArrowDown and one ArrowRight");
  await page.keyboard.press("Control+End");
  await waitFocus(frame, total + 1, 2, "Control+End");
  await page.keyboard.press("Control+Home");
  await waitFocus(frame, 2, 1, "Control+Home");
  return `grid of ${semantics.colcount} columns, ${total + 1} rows; arrows, Ctrl+End to row ${total + 1} and Ctrl+Home`;
}

/**
 * Copying: Ctrl+C copies the focused cell, Ctrl+Shift+C and the "Copy row" button the focused row as
 * tab-separated text. What the view hands the clipboard is recorded in the frame: the Clipboard API's
 * `writeText`, or the `copy` event of its fallback (a hidden textarea and `execCommand("copy")`, which a
 * sandboxed frame without `clipboard-write` uses).
 * Expects the keyboard focus on a data cell (after keyboardAndSemantics).
 */
export async function copies(page, frame) {
  await frame.evaluate(() => {
    window.__copied = [];
    const clipboard = navigator.clipboard;
    if (clipboard && clipboard.writeText) {
      const write = clipboard.writeText.bind(clipboard);
      clipboard.writeText = (text) => write(text).then(() => { window.__copied.push(text); });
    }
    document.addEventListener(
      "copy",
      (event) => {
        const t = event.target;
        if (t && typeof t.value === "string") window.__copied.push(t.value.slice(t.selectionStart, t.selectionEnd));
      },
      true,
    );
  });
  const focused = await focusedCell(frame);
  const rowTexts = await frame.evaluate((i) => {
    const row = document.querySelector(`#dv-grid [role=row][aria-rowindex="${i}"]`);
    return [...row.querySelectorAll("[role=gridcell]")].map((c) => c.textContent);
  }, focused.row);
  const copied = (n) =>
    frame.waitForFunction((n) => window.__copied.length >= n, n, { timeout: scaled(10_000) }).then(() =>
      frame.evaluate((n) => window.__copied[n - 1], n),
    );

  await page.keyboard.press("Control+c");
  const cell = await copied(1);
  if (cell !== focused.text) throw new Error(`Ctrl+C copied ${JSON.stringify(cell)}, the cell shows ${JSON.stringify(focused.text)}`);
  await page.keyboard.press("Control+Shift+c");
  const row = await copied(2);
  if (row !== rowTexts.join("\t")) throw new Error(`Ctrl+Shift+C copied ${JSON.stringify(row)}, the row shows ${JSON.stringify(rowTexts)}`);
  await frame.locator("#dv-copy-row").click();
  const button = await copied(3);
  if (button !== row) throw new Error(`"Copy row" copied ${JSON.stringify(button)}, not ${JSON.stringify(row)}`);
  // The live region is written 150 ms after the last announcement (a burst of them says only the last).
  const expected = `Copied row ${focused.row - 1}`;
  try {
    await frame.waitForFunction((text) => document.getElementById("dv-live")?.textContent === text, expected, {
      timeout: scaled(5_000),
    });
  } catch {
    const seen = await frame.evaluate(() => document.getElementById("dv-live")?.textContent ?? "");
    throw new Error(`the live region says ${JSON.stringify(seen)} after a copy, not ${JSON.stringify(expected)}`);
  }
  const said = expected;
  return `cell ${JSON.stringify(cell)}, row of ${rowTexts.length} values, "${said}"`;
}
