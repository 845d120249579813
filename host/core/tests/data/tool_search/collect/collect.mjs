// Lists the tools of every server in servers.json with the official MCP TypeScript SDK over
// stdio and prints the data set (../tool_sets.json) on stdout. run.sh installs the pinned
// packages into a scratch directory and calls this; see its header.
import { readFileSync, existsSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const scratch = process.argv[2];
if (!scratch) {
  console.error("usage: node collect.mjs SCRATCH_DIR");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, "servers.json"), "utf8"));
const nodeDir = join(scratch, "node");
const require = createRequire(join(nodeDir, "package.json"));
const { Client } = await import(require.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(
  require.resolve("@modelcontextprotocol/sdk/client/stdio.js")
);

mkdirSync(join(scratch, "fs-root"), { recursive: true });
const fill = (s) => s.replaceAll("{scratch}", scratch);

function npmCommand(server) {
  const pkgDir = join(nodeDir, "node_modules", server.package);
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin[server.bin];
  let license = pkg.license ?? "unknown";
  if (!existsSync(join(pkgDir, "LICENSE")) && license.startsWith("SEE LICENSE")) {
    license += " (the package ships no LICENSE file)";
  }
  return { command: process.execPath, args: [join(pkgDir, bin)], version: pkg.version, license };
}

async function pypiCommand(server) {
  const venv = join(scratch, "py", server.id);
  const py = join(venv, "bin", "python");
  const { execFileSync } = await import("node:child_process");
  const meta = JSON.parse(
    execFileSync(py, [join(here, "pypi_meta.py"), server.package]).toString(),
  );
  return {
    command: join(venv, "bin", server.bin),
    args: [],
    version: meta.version,
    license: meta.license,
  };
}

const collected = new Date().toISOString().slice(0, 10);
const out = {
  about:
    "Real MCP tool definitions for rho's tool search quality test (host/core/tests/tool_search_quality.rs). " +
    "Rebuilt by host/core/tests/data/tool_search/collect/run.sh; listed over stdio with the client named here.",
  client: manifest.client,
  servers: [],
};
for (const server of manifest.servers) {
  const how = server.registry === "npm" ? npmCommand(server) : await pypiCommand(server);
  if (how.version !== server.version) {
    throw new Error(`${server.package}: installed ${how.version}, servers.json pins ${server.version}`);
  }
  const env = { PATH: process.env.PATH, HOME: join(scratch, "home") };
  for (const [k, v] of Object.entries(server.env ?? {})) env[k] = fill(v);
  const transport = new StdioClientTransport({
    command: how.command,
    args: [...how.args, ...(server.args ?? []).map(fill)],
    env,
    stderr: "ignore",
    cwd: scratch,
  });
  const client = new Client({ name: "rho-tool-search-collect", version: "1" });
  const tools = [];
  try {
    await client.connect(transport, { timeout: 60000 });
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: 60000 });
      for (const t of page.tools) {
        // What rho reads of a tool: its name, title, description, input schema and annotations.
        tools.push({
          name: t.name,
          ...(t.title ? { title: t.title } : {}),
          description: t.description ?? "",
          inputSchema: t.inputSchema,
          ...(t.annotations ? { annotations: t.annotations } : {}),
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
  } finally {
    await client.close().catch(() => {});
  }
  console.error(`${server.id}: ${tools.length} tools`);
  if (tools.length === 0) throw new Error(`${server.package}: listed no tools`);
  out.servers.push({
    id: server.id,
    package: server.package,
    registry: server.registry,
    version: how.version,
    license: how.license,
    collected,
    started_as: [server.bin, ...(server.args ?? [])].join(" "),
    ...(server.env ? { dummy_env: server.env } : {}),
    ...(server.note ? { note: server.note } : {}),
    tools,
  });
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
process.exit(0);
