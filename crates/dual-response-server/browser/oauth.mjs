// The official TypeScript MCP client's streamable HTTP transport against `dual-response serve
// --oauth-issuer …` (tests/oauth_client.rs): without a token the server answers 401 and names its
// resource metadata; with the access token the test's issuer signed, the client lists the tools and
// calls `query`.
//
//   node oauth.mjs MCP_URL ACCESS_TOKEN 'SELECT …'
//
// Prints one JSON line: {"refused": {code, message}, "tools": [names], "result": CallToolResult}; exits non-zero
// on any other error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token, sql] = process.argv.slice(2);
const timer = setTimeout(() => {
  console.error('oauth.mjs: no answer within 60 s');
  process.exit(3);
}, 60_000);

// Without a token: the connection is refused (the SDK reports the 401).
let refused = null;
try {
  const anonymous = new Client({ name: 'dual-oauth-test', version: '1.0.0' });
  await anonymous.connect(new StreamableHTTPClientTransport(new URL(url)));
  await anonymous.close();
} catch (error) {
  // The SDK's StreamableHTTPError carries the HTTP status as `code`.
  refused = { code: error?.code ?? null, message: String(error?.message ?? error) };
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'dual-oauth-test', version: '1.0.0' });
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: 'query', arguments: { sql } });
  console.log(JSON.stringify({ refused, tools: tools.map((tool) => tool.name), result }));
} finally {
  clearTimeout(timer);
  await client.close();
}
