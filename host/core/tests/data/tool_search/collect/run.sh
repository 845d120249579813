#!/usr/bin/env bash
# Rebuilds ../tool_sets.json: installs every server pinned in servers.json (npm packages into
# SCRATCH/node, each PyPI package into its own venv SCRATCH/py/<id>) and lists their tools
# with the official MCP TypeScript SDK over stdio (collect.mjs). Needs node (20 or later),
# npm, python3 (3.10 or later) and the npm and PyPI registries. Credentials are dummies: every
# server here lists its tools without checking them. The quality test reads only the
# committed JSON; nothing here runs in tests.
#
#   host/core/tests/data/tool_search/collect/run.sh /tmp/tool-search-collect
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scratch="${1:?usage: run.sh SCRATCH_DIR (outside the repository)}"
mkdir -p "$scratch/node" "$scratch/py" "$scratch/home"
scratch="$(cd "$scratch" && pwd)"

# npm: the client and every npm server at its exact version, without install scripts (none of
# these needs one to list tools; puppeteer's would download a browser).
mapfile -t npm_specs < <(node -e '
  const m = require(process.argv[1]);
  console.log(`${m.client.package}@${m.client.version}`);
  for (const s of m.servers) if (s.registry === "npm") console.log(`${s.package}@${s.version}`);
' "$here/servers.json")
cd "$scratch/node"
[ -f package.json ] || echo '{"name":"tool-search-collect","private":true}' > package.json
npm install --no-audit --no-fund --ignore-scripts --save-exact "${npm_specs[@]}"

# PyPI: one venv per server, so each gets the `mcp` package it was built against.
while read -r id spec; do
  [ -x "$scratch/py/$id/bin/python" ] || python3 -m venv "$scratch/py/$id"
  # shellcheck disable=SC2086 # spec is a list of requirements
  "$scratch/py/$id/bin/pip" install --quiet $spec
done < <(node -e '
  const m = require(process.argv[1]);
  for (const s of m.servers) if (s.registry === "PyPI")
    console.log(s.id, [`${s.package}==${s.version}`, ...(s.with ?? [])].join(" "));
' "$here/servers.json")

cd "$scratch"
node "$here/collect.mjs" "$scratch" > "$here/../tool_sets.json.new"
mv "$here/../tool_sets.json.new" "$here/../tool_sets.json"
echo "wrote $here/../tool_sets.json" >&2
