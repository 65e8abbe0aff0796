// The official TypeScript MCP client's stdio transport against `dual-response serve --stdio`
// (tests/stdio_client.rs): starts the server as an MCP host would, from an `mcpServers` entry,
// lists the tools and calls `query`.
//
//   node stdio.mjs '{"command": "…", "args": [...], "env": {...}}' 'SELECT …'
//
// Prints one JSON line: {"tools": [names], "result": CallToolResult}; exits non-zero on any error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [entryJson, sql] = process.argv.slice(2);
const entry = JSON.parse(entryJson);
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: { ...process.env, ...(entry.env ?? {}) },
  stderr: 'inherit',
});
const client = new Client({ name: 'dual-stdio-test', version: '1.0.0' });
const timer = setTimeout(() => {
  console.error('stdio.mjs: no answer within 60 s');
  process.exit(3);
}, 60_000);
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: 'query', arguments: { sql } });
  console.log(JSON.stringify({ tools: tools.map((tool) => tool.name), result }));
} finally {
  clearTimeout(timer);
  await client.close();
}
