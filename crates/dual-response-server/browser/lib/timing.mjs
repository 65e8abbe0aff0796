// Time limits of the browser tests, and the one knob that scales them.
//
// Every wait of run.mjs (a check's limit, a page's rows, a pending query's end, a request's time limit,
// the retries of a REST read, the whole run) is a base value times DUAL_BROWSER_TIME_SCALE (default 1).
// The base values are already meant for a loaded 2-core CI machine (load average 6–9: every process
// gets a fraction of a core, and the demo is a debug build); raise the scale on a slower machine, or
// lower it to find slowness sooner. A limit only bounds a wait: a scale never makes a check pass that
// would fail, it only decides how long a check may take before it counts as failed.

const raw = process.env.DUAL_BROWSER_TIME_SCALE;
const parsed = raw === undefined || raw === "" ? 1 : Number(raw);
if (!Number.isFinite(parsed) || parsed <= 0) {
  throw new Error(`DUAL_BROWSER_TIME_SCALE=${raw} is not a positive number`);
}

/** The scale of every time limit (DUAL_BROWSER_TIME_SCALE, default 1). */
export const TIME_SCALE = parsed;

/** `ms` scaled by DUAL_BROWSER_TIME_SCALE, rounded to whole ms. */
export const scaled = (ms) => Math.round(ms * TIME_SCALE);
