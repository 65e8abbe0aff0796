// The column profile in the view (issue 45, item 4): each header's sparkline and its "N% null · D distinct"
// line, the full profile in a popover on keyboard focus and hover (aria-describedby), the chart panel (an SVG
// with role=img, an aria-label and one bar per bin, in the host's colours; Escape closes it and gives the
// focus back), and no trace of a profile for a result that has none.
//
// DOM hooks: a header `[role=columnheader][data-column]` holds `.dv-prof` with `svg.dv-spark[data-kind]`
// (`histogram`: one `rect.dv-spark-bar` per bin; `top`: one per top value) and `.dv-profline`; the popover
// is `#dv-profile-pop` (role=tooltip); the chart `#dv-chart` (role=dialog) with `#dv-chart-svg` (role=img) and
// its `rect.dv-chart-bar`; `window.__dualView.profile()` is `{state, reads, profile}`.
// `frame` is a playwright Frame (the view's iframe, or the standalone page's main frame).

import { scaled } from "./timing.mjs";

const fail = (message) => {
  throw new Error(message);
};

const head = (column) => `#dv-grid [role=columnheader][data-column="${column}"]`;

/** The profile's column `name`, or a failure naming what the profile has. */
export function columnOf(profile, name) {
  const column = profile?.columns?.find((c) => c.name === name);
  if (!column) fail(`the profile has no column ${name}: ${JSON.stringify(profile)?.slice(0, 300)}`);
  return column;
}

/** `part` of `whole` as the view writes it: a whole percentage, `<1%` for a small share. */
function percent(part, whole) {
  if (!whole) return "0%";
  const share = (part * 100) / whole;
  return share > 0 && share < 1 ? "<1%" : `${Math.round(share)}%`;
}

/** Waits for `__dualView.profile().state` to be one of `states`; returns what `profile()` says. */
export async function waitState(frame, states, timeout = scaled(60_000)) {
  try {
    await frame.waitForFunction((states) => states.includes(window.__dualView?.profile?.().state), states, { timeout });
  } catch (e) {
    const now = await frame.evaluate(() => window.__dualView?.profile?.()).catch(() => null);
    fail(`the view's profile did not become ${states.join(" or ")}: ${JSON.stringify(now)?.slice(0, 300)} (${e.message.split("\n")[0]})`);
  }
  return frame.evaluate(() => window.__dualView.profile());
}

/**
 * The header of column `name` shows a histogram with one bar per bin of `profile` and the line
 * "N% null · D distinct" of its numbers (`~D` when `distinct` is an estimate).
 */
export async function headerHistogram(frame, profile, name) {
  const column = columnOf(profile, name);
  const bins = column.histogram?.length ?? 0;
  if (!bins) fail(`the profile's ${name} has no histogram: ${JSON.stringify(column).slice(0, 300)}`);
  await frame.waitForSelector(`${head(name)} svg.dv-spark[data-kind="histogram"]`, { timeout: scaled(30_000) });
  const shown = await frame.evaluate((selector) => {
    const h = document.querySelector(selector);
    return {
      bars: h.querySelectorAll("svg.dv-spark .dv-spark-bar").length,
      heights: [...h.querySelectorAll("svg.dv-spark .dv-spark-bar")].map((r) => Number(r.getAttribute("height"))),
      line: h.querySelector(".dv-profline")?.textContent ?? null,
      box: h.querySelector("svg.dv-spark").getBoundingClientRect().toJSON(),
    };
  }, head(name));
  if (shown.bars !== bins) fail(`the ${name} header shows ${shown.bars} bars, the profile has ${bins} bins`);
  // the tallest bar is the fullest bin
  const fullest = column.histogram.reduce((best, b, i, all) => (b.count > all[best].count ? i : best), 0);
  if (Math.max(...shown.heights) !== shown.heights[fullest]) fail(`the ${name} sparkline's tallest bar is not bin ${fullest}: ${shown.heights}`);
  if (shown.box.width < 20 || shown.box.height < 8) fail(`the ${name} sparkline is ${shown.box.width}×${shown.box.height} px`);
  const approx = profile.approximate?.some((a) => a.column === name && a.stats.includes("distinct"));
  const distinct = await frame.evaluate((n) => n.toLocaleString(), column.distinct);
  const expected = `${percent(column.nulls, profile.rows)} null · ${approx ? "~" : ""}${distinct} distinct`;
  if (shown.line !== expected) fail(`the ${name} header says "${shown.line}", the profile "${expected}"`);
  return `${name}: ${bins} bars, "${shown.line}"`;
}

/** The header of column `name` (a column of few values) shows its top values as one stacked bar. */
export async function headerTopValues(frame, profile, name) {
  const column = columnOf(profile, name);
  if (column.histogram?.length || !column.top?.length) fail(`the profile's ${name} is no top-values column: ${JSON.stringify(column).slice(0, 300)}`);
  await frame.waitForSelector(`${head(name)} svg.dv-spark[data-kind="top"]`, { timeout: scaled(30_000) });
  const segments = await frame.evaluate((selector) => document.querySelectorAll(`${selector} svg.dv-spark .dv-spark-bar`).length, head(name));
  if (segments !== column.top.length) fail(`the ${name} header shows ${segments} segments, the profile has ${column.top.length} top values`);
  return `${name}: ${segments} top values`;
}

/**
 * Keyboard focus on the header of `name` shows the popover with the full profile, the header
 * `aria-describedby` it; Escape hides it; the pointer over another header shows that one's.
 */
export async function popover(frame, profile, name, other) {
  const column = columnOf(profile, name);
  await frame.locator(head(name)).focus();
  await frame.waitForSelector("#dv-profile-pop:not([hidden])", { timeout: scaled(10_000) });
  const seen = await frame.evaluate((selector) => {
    const h = document.querySelector(selector);
    const pop = document.getElementById("dv-profile-pop");
    const box = pop.getBoundingClientRect();
    return {
      describedBy: h.getAttribute("aria-describedby"),
      role: pop.getAttribute("role"),
      text: pop.textContent,
      focused: document.activeElement === h,
      visible: box.width > 0 && box.height > 0,
    };
  }, head(name));
  if (!seen.focused) fail(`the ${name} header did not take the focus`);
  if (seen.describedBy !== "dv-profile-pop") fail(`the focused ${name} header has aria-describedby="${seen.describedBy}"`);
  if (seen.role !== "tooltip" || !seen.visible) fail(`the popover is ${JSON.stringify(seen)}`);
  const expected = [name, "Distinct", "Nulls", "Min", "Max", String(column.min), String(column.max)];
  if (typeof column.p50 === "number") expected.push("Median (p50)");
  const text = seen.text.replace(/[\u00a0\u202f,]/g, "");
  const missing = expected.filter((part) => !text.includes(part.replace(/,/g, "")));
  if (missing.length) fail(`the popover lacks ${JSON.stringify(missing)}: "${seen.text.slice(0, 300)}"`);
  await frame.locator(head(name)).press("Escape");
  await frame.waitForSelector("#dv-profile-pop", { state: "hidden", timeout: scaled(10_000) });
  const left = await frame.evaluate((selector) => document.querySelector(selector).getAttribute("aria-describedby"), head(name));
  if (left !== null) fail(`after Escape the header still has aria-describedby="${left}"`);
  await frame.locator(head(other)).hover();
  await frame.waitForFunction(
    (other) => {
      const pop = document.getElementById("dv-profile-pop");
      return !pop.hidden && pop.querySelector(".dv-pop-title")?.textContent === other;
    },
    other,
    { timeout: scaled(10_000) },
  );
  // the pointer leaves the headers: the focused header's popover is back; Escape dismisses it (it takes no
  // pointer events either way, so it never stands between a later check's click and a cell)
  await frame.locator("#dv-title").hover();
  await frame.waitForFunction(
    (name) => document.getElementById("dv-profile-pop").querySelector(".dv-pop-title")?.textContent === name,
    name,
    { timeout: scaled(10_000) },
  );
  await frame.locator(head(name)).press("Escape");
  await frame.waitForSelector("#dv-profile-pop", { state: "hidden", timeout: scaled(10_000) });
  return `focus: "${seen.text.slice(0, 80)}…"; Escape hides it; hover shows ${other}'s`;
}

/**
 * C on the focused header of `name` opens the chart panel: an SVG with role=img, an aria-label naming
 * the column and its bins, one bar per bin filled with `colour` (the host's, when given); Escape closes
 * it and the focus is on the header again.
 */
export async function chart(frame, profile, name, colour) {
  const column = columnOf(profile, name);
  const bins = column.histogram.length;
  await frame.locator(head(name)).focus();
  await frame.locator(head(name)).press("c");
  await frame.waitForSelector("#dv-chart:not([hidden])", { timeout: scaled(10_000) });
  const seen = await frame.evaluate(() => {
    const svg = document.getElementById("dv-chart-svg");
    const bars = [...svg.querySelectorAll("rect.dv-chart-bar")];
    return {
      role: svg.getAttribute("role"),
      label: svg.getAttribute("aria-label") ?? "",
      bars: bars.length,
      fill: bars[0] ? getComputedStyle(bars[0]).fill : null,
      labels: [...svg.querySelectorAll("text")].map((t) => t.textContent),
      focus: document.activeElement?.id ?? null,
      kind: document.getElementById("dv-chart").dataset.kind,
    };
  });
  if (seen.role !== "img") fail(`the chart's svg has role=${seen.role}`);
  if (seen.kind !== "histogram") fail(`the chart of ${name} is ${seen.kind}, not a histogram`);
  if (seen.bars !== bins) fail(`the chart has ${seen.bars} bars, the profile ${bins} bins`);
  if (!seen.label.includes(`Histogram of ${name}`) || !seen.label.includes(`${bins} bins`)) fail(`the chart's aria-label is "${seen.label}"`);
  if (seen.labels.length < 4) fail(`the chart's axes have ${seen.labels.length} labels: ${JSON.stringify(seen.labels)}`);
  if (colour && seen.fill !== colour) fail(`the chart's bars are ${seen.fill}, the host's colour is ${colour}`);
  if (seen.focus !== "dv-chart-close") fail(`the focus is on #${seen.focus}, not in the chart panel`);
  await frame.locator("#dv-chart-close").press("Escape");
  await frame.waitForSelector("#dv-chart", { state: "hidden", timeout: scaled(10_000) });
  await frame.waitForFunction((selector) => document.activeElement === document.querySelector(selector), head(name), { timeout: scaled(10_000) });
  await frame.locator(head(name)).press("Escape");
  await frame.waitForSelector("#dv-profile-pop", { state: "hidden", timeout: scaled(10_000) });
  return `${seen.bars} bars in ${seen.fill}; "${seen.label.slice(0, 100)}"; Escape gives the focus back`;
}

/**
 * The chart button of the header of `name` (a column of few values) opens the chart of its top values: one
 * bar per top value (and one for the other values, one for nulls, when there are any), an aria-label that
 * names each with its count; Close shuts it and the focus is on the header again.
 */
export async function chartTopValues(frame, profile, name) {
  const column = columnOf(profile, name);
  const top = column.top ?? [];
  const other = column.count - top.reduce((sum, t) => sum + t.count, 0);
  const bars = top.length + (other > 0 ? 1 : 0) + (column.nulls > 0 ? 1 : 0);
  await frame.locator(`${head(name)} .dv-chartbtn`).click();
  await frame.waitForSelector("#dv-chart:not([hidden])", { timeout: scaled(10_000) });
  const seen = await frame.evaluate(() => ({
    kind: document.getElementById("dv-chart").dataset.kind,
    bars: document.querySelectorAll("#dv-chart-svg rect.dv-chart-bar").length,
    label: document.getElementById("dv-chart-svg").getAttribute("aria-label") ?? "",
    sorted: document.querySelector('[role=columnheader][aria-sort]:not([aria-sort="none"])')?.dataset.column ?? null,
  }));
  if (seen.kind !== "top") fail(`the chart of ${name} is ${seen.kind}, not its top values`);
  if (seen.bars !== bars) fail(`the chart has ${seen.bars} bars, expected ${bars} (${top.length} top values)`);
  const count = await frame.evaluate((n) => n.toLocaleString(), top[0].count);
  if (!seen.label.startsWith(`Top values of ${name}`) || !seen.label.includes(`${top[0].value} ${count}`)) fail(`the chart's aria-label is "${seen.label}"`);
  if (seen.sorted === name) fail(`the chart button sorted by ${name}`);
  await frame.locator("#dv-chart-close").click();
  await frame.waitForSelector("#dv-chart", { state: "hidden", timeout: scaled(10_000) });
  await frame.waitForFunction((selector) => document.activeElement === document.querySelector(selector), head(name), { timeout: scaled(10_000) });
  await frame.locator(head(name)).press("Escape");
  await frame.waitForSelector("#dv-profile-pop", { state: "hidden", timeout: scaled(10_000) });
  return `${seen.bars} bars; "${seen.label.slice(0, 100)}"; Close gives the focus back`;
}

/**
 * A result without a profile: no sparkline, no profile line, no chart button, nothing in #dv-error.
 * `asked`: whether the view must have asked for the profile (Apps: `no_profile`) or not (REST: the
 * metadata said live, so it asks nothing, and the browser logs no 404).
 */
export async function noProfile(frame, asked) {
  const said = await waitState(frame, ["none", "error"]);
  if (said.state !== "none") fail(`the view's profile is ${JSON.stringify(said).slice(0, 300)}, not "none"`);
  if (asked ? said.reads < 1 : said.reads !== 0) fail(`the view read the profile ${said.reads} times; expected ${asked ? "at least once" : "never"}`);
  const seen = await frame.evaluate(() => ({
    marked: document.getElementById("dv-grid").hasAttribute("data-profile"),
    lines: document.querySelectorAll("#dv-grid .dv-prof, #dv-grid svg.dv-spark, #dv-grid .dv-chartbtn").length,
    heads: document.querySelectorAll("#dv-grid [role=columnheader]").length,
    error: document.getElementById("dv-error").hidden ? "" : document.getElementById("dv-error").textContent,
  }));
  if (!seen.heads) fail("the view shows no header");
  if (seen.marked || seen.lines) fail(`a result without a profile shows ${seen.lines} profile element(s)`);
  if (seen.error) fail(`#dv-error says "${seen.error}"`);
  return `state none after ${said.reads} read(s); ${seen.heads} plain headers, no error`;
}

/**
 * The complete profile of a result over REST (`GET {base}/profile`, read again every second while it is
 * `complete: false` or 409 `not_ready`), what the view must end up showing.
 */
export async function completeProfile(get, base, limitMs = scaled(120_000)) {
  const until = Date.now() + limitMs;
  let last = "";
  while (Date.now() < until) {
    const response = await get(`${base}/profile`, { retry: false });
    const body = await response.text();
    last = `${response.status} ${body.slice(0, 200)}`;
    if (response.status === 200) {
      const profile = JSON.parse(body);
      if (profile.complete === true) return profile;
    } else if (response.status !== 409) {
      fail(`GET ${base}/profile: ${last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  fail(`the profile was not complete within ${limitMs / 1000} s: ${last}`);
}
