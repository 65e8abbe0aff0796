// Headless Chromium for the tests: Debian's /usr/bin/chromium (or $CHROMIUM) driven by playwright-core,
// which never downloads a browser. The flags keep Chromium off the network (this machine's network is
// closed; without them it retries Google's hosts at every start) and let it run as root in a container.
// Every host name resolves to nothing (--host-resolver-rules): the tests reach the demos and the host
// page's server by the IP literal 127.0.0.1 only, which no resolver sees.

import { existsSync } from "node:fs";

import { chromium } from "playwright-core";

import { scaled } from "./timing.mjs";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

/** Launches Chromium; throws saying how to install it when it is missing. */
export async function launch() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`bash .ci/browser\` (it installs Debian's chromium)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: scaled(60_000) });
}

/**
 * A fresh context (its own profile state) that records every console error and uncaught exception of
 * every page and frame in it, in `problems`.
 */
export async function newContext(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 600 }, colorScheme: "light", ...options });
  const problems = [];
  context.on("console", (message) => {
    if (message.type() === "error") {
      const where = message.location();
      problems.push(`console.error in ${message.page()?.url() ?? "?"} (${where.url}:${where.lineNumber}): ${message.text()}`);
    }
  });
  context.on("weberror", (error) => problems.push(`uncaught in ${error.page()?.url() ?? "?"}: ${error.error().stack ?? error.error()}`));
  context.on("page", (page) => {
    page.on("pageerror", (error) => problems.push(`pageerror in ${page.url()}: ${error.stack ?? error}`));
    page.on("dialog", (dialog) => {
      problems.push(`a dialog opened (${dialog.type()}: ${dialog.message()})`);
      dialog.dismiss().catch(() => {});
    });
    page.on("crash", () => problems.push(`page crashed: ${page.url()}`));
  });
  context.setDefaultTimeout(scaled(30_000));
  return { context, problems };
}
