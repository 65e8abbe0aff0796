// The test server of the host page: serves host.html and host.js (bundled by esbuild into a temporary
// directory, never committed), and reverse-proxies /mcp and /resources to one demo so that the host page
// reaches the demo on its own origin.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const HERE = dirname(fileURLToPath(import.meta.url));
const HOST_DIR = join(HERE, "..", "host");

/** Bundles host/host.js with esbuild into a fresh temporary directory; returns the bundle's text. */
export async function bundleHost() {
  const dir = await mkdtemp(join(tmpdir(), "dual-browser-host-"));
  try {
    const outfile = join(dir, "host.js");
    await build({
      entryPoints: [join(HOST_DIR, "host.js")],
      bundle: true,
      format: "iife",
      platform: "browser",
      target: "chrome120",
      outfile,
      logLevel: "warning",
    });
    return await readFile(outfile, "utf8");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the host page's server on 127.0.0.1 (a free port) in front of the demo at `demoUrl`
 * (`http://127.0.0.1:PORT`). Resolves to `{ url, close }`.
 */
export async function startHostServer(demoUrl, hostJs) {
  const demo = new URL(demoUrl);
  const html = await readFile(join(HOST_DIR, "host.html"), "utf8");
  const server = http.createServer((req, res) => {
    const path = req.url.split("?")[0];
    if (path === "/" || path === "/host.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(html);
    } else if (path === "/host.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" });
      res.end(hostJs);
    } else if (path === "/favicon.ico") {
      res.writeHead(204);
      res.end();
    } else if (path === "/mcp" || path.startsWith("/mcp/") || path === "/resources" || path.startsWith("/resources/")) {
      proxy(req, res, demo);
    } else {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function proxy(req, res, demo) {
  const headers = { ...req.headers, host: demo.host };
  delete headers.origin; // the demo sees a same-origin client, as the page does
  delete headers.referer;
  const upstream = http.request(
    { hostname: demo.hostname, port: demo.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.setTimeout(60_000, () => upstream.destroy(new Error("the demo did not answer within 60 s")));
  upstream.on("error", (e) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${e.message}`);
    } else {
      res.destroy(e);
    }
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}
