// The test host of the browser tests: a minimal MCP Apps host built only from the official pieces.
//
// * the official TypeScript MCP client (`Client` + `StreamableHTTPClientTransport`), connected to the demo's
//   `/mcp` through the test server's same-origin proxy, declaring the apps extension
//   (`extensions["io.modelcontextprotocol/ui"].mimeTypes = ["text/html;profile=mcp-app"]`);
// * the official host bridge (`AppBridge` + `PostMessageTransport` of `@modelcontextprotocol/ext-apps/app-bridge`),
//   which proxies the view's `tools/call` and `resources/read` to that client.
//
// The view (the `ui://` resource named by the tool's `_meta.ui.resourceUri`) is rendered in an iframe with
// `sandbox="allow-scripts"` and `srcdoc`, under the specification's restrictive default CSP. What the view
// asks of the host (`ui/open-link`, `ui/download-file`, `ui/update-model-context`, size changes, display modes)
// is recorded in `window.__host.events` for run.mjs and bench.mjs, which drive this page through `window.__host`.
// The host advertises `hostCapabilities.downloadFile` only when `open` is asked to (`downloadFile: true`), and
// `hostCapabilities.updateModelContext` (text) unless it is asked not to (`modelContext: false`). With
// `noRefine: true` it answers the view's `tools/call` of `refine` as a server without that tool does (JSON-RPC
// -32602 "unknown tool `refine`").

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** The specification's default CSP for a view that declares no `_meta.ui.csp` domains. */
export const DEFAULT_VIEW_CSP = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "media-src 'self' data:",
  "connect-src 'none'",
].join("; ");

/** Light theme values of the specification's style variables (a subset, as hosts may send). */
const LIGHT_STYLES = {
  "--color-background-primary": "#ffffff",
  "--color-background-secondary": "#f6f8fa",
  "--color-text-primary": "#1f2328",
  "--color-text-secondary": "#59636e",
  "--color-border-primary": "#d0d7de",
  "--font-sans": "system-ui, -apple-system, 'Segoe UI', sans-serif",
  "--font-mono": "ui-monospace, 'DejaVu Sans Mono', monospace",
};

const events = { openLinks: [], downloads: [], modelContexts: [], sizeChanges: [], displayModes: [], logs: [], initialized: 0 };
let current = null; // { client, bridge, iframe, faults }

/**
 * Connects the official MCP client to the demo (through this page's origin), as the owner of `token`.
 * @param {string | undefined} token bearer token of the demo's `--auth-tokens`, if any
 */
async function connect(token) {
  const client = new Client(
    { name: "dual-response-browser-test-host", version: "1.0.0" },
    { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", location.origin), { requestInit });
  await client.connect(transport);
  return client;
}

/** Inserts the CSP meta element first in the document's head. */
function withCsp(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${csp}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) {
    const at = head.index + head[0].length;
    return html.slice(0, at) + meta + html.slice(at);
  }
  return meta + html;
}

/**
 * Opens a tool result in the view, the way a host does:
 * lists the tools, calls `tool` (or takes `toolResult` as given), reads the `ui://` resource named by the
 * tool's `_meta.ui.resourceUri`, renders it in a sandboxed iframe and hands it the input and the result.
 * Resolves once the tool result was sent; `sentAt` is `performance.timeOrigin + performance.now()` then.
 */
async function open({
  token,
  tool = "query",
  args = {},
  toolResult = null,
  prompt = "",
  downloadFile = false,
  modelContext = true,
  noRefine = false,
} = {}) {
  close();
  const client = await connect(token);
  const { tools } = await client.listTools();
  const definition = tools.find((t) => t.name === tool);
  if (!definition) throw new Error(`the demo lists no tool ${tool}`);
  const uri = getToolUiResourceUri(definition);
  if (!uri) throw new Error(`tool ${tool} carries no _meta.ui.resourceUri (the apps extension was declared)`);
  const result = toolResult ?? (await client.callTool({ name: tool, arguments: args }));
  const read = await client.readResource({ uri });
  const content = read.contents?.[0];
  if (!content || content.mimeType !== RESOURCE_MIME_TYPE || typeof content.text !== "string") {
    throw new Error(`resources/read ${uri} gave no ${RESOURCE_MIME_TYPE} text: ${JSON.stringify(read).slice(0, 300)}`);
  }
  const uiMeta = content._meta?.ui ?? {};
  document.getElementById("prompt").textContent = prompt;

  const iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("title", "dual-response result view");
  iframe.srcdoc = withCsp(content.text, DEFAULT_VIEW_CSP);
  document.getElementById("frame-box").appendChild(iframe);

  const bridge = new AppBridge(
    client,
    { name: "dual-response-browser-test-host", version: "1.0.0" },
    {
      openLinks: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      ...(downloadFile ? { downloadFile: {} } : {}),
      ...(modelContext ? { updateModelContext: { text: {} } } : {}),
    },
    {
      hostContext: {
        theme: "light",
        styles: { variables: LIGHT_STYLES },
        displayMode: "inline",
        availableDisplayModes: ["inline", "fullscreen"],
        containerDimensions: { maxHeight: 520, width: 968 },
        locale: "en-US",
        platform: "web",
        toolInfo: { tool: definition },
      },
    },
  );
  bridge.onopenlink = async ({ url }) => {
    events.openLinks.push(url);
    return {};
  };
  if (downloadFile) {
    bridge.ondownloadfile = async (params) => {
      events.downloads.push(params);
      return {};
    };
  }
  if (modelContext) {
    bridge.onupdatemodelcontext = async (params) => {
      events.modelContexts.push(params);
      return {};
    };
  }
  bridge.onsizechange = (size) => {
    events.sizeChanges.push(size);
    // inline, the frame takes the view's height, up to the container's maximum
    if (typeof size.height === "number" && size.height > 0) iframe.style.height = `${Math.min(size.height, 520)}px`;
  };
  bridge.onrequestdisplaymode = async ({ mode }) => {
    events.displayModes.push(mode);
    return { mode };
  };
  bridge.onloggingmessage = (message) => {
    events.logs.push(message);
  };
  const sent = new Promise((resolve, reject) => {
    bridge.oninitialized = () => {
      events.initialized += 1;
      (async () => {
        await bridge.sendToolInput({ arguments: args });
        const sentAt = performance.timeOrigin + performance.now();
        await bridge.sendToolResult(result);
        resolve(sentAt);
      })().catch(reject);
    };
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // the bridge installs its proxies in connect(): replaced after it
  if (noRefine) {
    const proxy = bridge.oncalltool;
    if (!proxy) throw new Error("the bridge proxies no tools/call");
    bridge.oncalltool = async (params, extra) => {
      if (params?.name === "refine") {
        throw Object.assign(new Error("MCP error -32602: unknown tool `refine`"), { code: -32602 });
      }
      return proxy(params, extra);
    };
  }
  current = { client, bridge, iframe, faults: null };
  const sentAt = await sent;
  return { sentAt, result, uri, uiMeta, tool: definition };
}

/** Removes the view (after `ui/resource-teardown`) and closes the MCP client. */
async function close() {
  if (!current) return;
  const { client, bridge, iframe } = current;
  current = null;
  try {
    await Promise.race([bridge.teardownResource({}), new Promise((r) => setTimeout(r, 500))]);
  } catch {
    // the view may already be gone
  }
  iframe.remove();
  await client.close().catch(() => {});
}

/** Calls a tool with the current host's client (as its owner), outside the view. */
async function callTool(name, args) {
  if (!current) throw new Error("no open view");
  return current.client.callTool({ name, arguments: args });
}

/** Connects a client of its own as `token`'s owner, calls `tool` and closes it again. */
async function callAs(token, name, args) {
  const client = await connect(token);
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * Answers the view's next `count` `resources/read` requests whose URI contains `match` with the error the
 * demo answers when it has no capacity (a sort slot or a database connection), as the bridge relays it:
 * JSON-RPC -32603 "MCP error -32603: the resource's query could not be executed; try again later" with
 * `data: {error: "OVERLOADED"}` (dual-rmcp's read_error: the server's error code, ServerErrorCode::as_str). The reads after them reach the server again.
 * Resolves to the fault counters `{left, injected}` (read them again with `faultsLeft()`).
 */
async function failReads({ count, match = "", code = "OVERLOADED" }) {
  if (!current) throw new Error("no open view");
  const view = current;
  if (!view.faults) {
    const proxy = view.bridge.onreadresource;
    if (!proxy) throw new Error("the bridge proxies no resources/read");
    view.faults = { left: 0, injected: 0, match: "", code };
    view.bridge.onreadresource = async (params, extra) => {
      const f = view.faults;
      if (f.left > 0 && String(params?.uri ?? "").includes(f.match)) {
        f.left -= 1;
        f.injected += 1;
        throw Object.assign(new Error("MCP error -32603: the resource's query could not be executed; try again later"), {
          code: -32603,
          data: { error: f.code },
        });
      }
      return proxy(params, extra);
    };
  }
  Object.assign(view.faults, { left: count, match, code });
  return faultsLeft();
}

/** What failReads has still to inject, and has injected. */
function faultsLeft() {
  const f = current?.faults;
  return f ? { left: f.left, injected: f.injected } : { left: 0, injected: 0 };
}

/** Sends the view a new host context (theme, display mode, …) through the bridge. */
async function setHostContext(context) {
  if (!current) throw new Error("no open view");
  await current.bridge.setHostContext(context);
}

window.__host = { open, close, callTool, callAs, setHostContext, failReads, faultsLeft, events, DEFAULT_VIEW_CSP };
