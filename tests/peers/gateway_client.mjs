// An MCP client on the TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in package.json)
// for the tests of `rho mcp serve`: the 2025-11-25 revision over stdio.
//
//     node gateway_client.mjs [--cancel-after MS] [--call NAME JSON]... -- COMMAND ARGS...
//     node gateway_client.mjs [--bearer TOKEN] [--call NAME JSON]... --url URL
//
// Starts COMMAND as a stdio MCP server (this process's environment and working directory), or
// speaks Streamable HTTP to URL (with `Authorization: Bearer TOKEN` when given),
// lists the tools, makes each call in order, and prints one JSON document: the protocol
// version, the tools (name, annotations) and each call's result (isError, its text blocks,
// structuredContent), or `{error}` when it failed. With `--cancel-after`, a call still running
// after MS milliseconds is cancelled (the SDK sends `notifications/cancelled`).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const options = split < 0 ? argv : argv.slice(0, split);
const command = split < 0 ? [] : argv.slice(split + 1);
const calls = [];
let cancelAfter = null;
let url = null;
let bearer = null;
for (let i = 0; i < options.length; i++) {
  if (options[i] === "--url") {
    url = options[i + 1];
    i += 1;
    continue;
  }
  if (options[i] === "--bearer") {
    bearer = options[i + 1];
    i += 1;
    continue;
  }
  if (options[i] === "--call") {
    calls.push([options[i + 1], JSON.parse(options[i + 2])]);
    i += 2;
  } else if (options[i] === "--cancel-after") {
    cancelAfter = Number(options[i + 1]);
    i += 1;
  }
}

const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), {
      requestInit: bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : {},
    })
  : new StdioClientTransport({
      command: command[0],
      args: command.slice(1),
      env: process.env,
      cwd: process.cwd(),
      stderr: "inherit",
    });
// The SDK tells the transport the version the handshake settled on.
let negotiated = null;
transport.setProtocolVersion = (version) => {
  negotiated = version;
};
const client = new Client({ name: "rho-gateway-test", version: "1.0.0" });
await client.connect(transport);
const report = { protocolVersion: negotiated, calls: [] };
const listed = await client.listTools();
report.tools = listed.tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null }));
for (const [name, args] of calls) {
  const signal = cancelAfter === null ? undefined : AbortSignal.timeout(cancelAfter);
  let result;
  try {
    result = await client.callTool({ name, arguments: args }, undefined, { signal });
  } catch (error) {
    report.calls.push({ name, error: String(error) });
    continue;
  }
  report.calls.push({
    name,
    isError: Boolean(result.isError),
    text: result.content.filter((b) => b.type === "text").map((b) => b.text),
    structuredContent: result.structuredContent ?? null,
  });
}
report.serverVersion = client.getServerVersion() ?? null;
await client.close();
process.stdout.write(JSON.stringify(report, null, 1) + "\n");
