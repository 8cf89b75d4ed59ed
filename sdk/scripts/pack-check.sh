#!/usr/bin/env bash
# Packs the SDK as npm would publish it and proves the tarball works for a stranger: it installs
# into an empty project outside the monorepo, typechecks a strict NodeNext consumer (exact types,
# not `any`), makes one real request, and loads it from CommonJS (require) as well as ESM (import), on
# this Node and on Node 22 and 24 (their binaries from the npm registry). Not part of the vitest suite: it needs npm and the cache.
#   usage: sdk/scripts/pack-check.sh        (from anywhere; KEEP=1 keeps the temp dir)
set -euo pipefail

sdk_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo_dir="$(cd "$sdk_dir/.." && pwd)"
tsc="$repo_dir/node_modules/typescript/bin/tsc"
work="$(mktemp -d "${TMPDIR:-/tmp}/sdk-pack-check.XXXXXX")"
if [[ "${KEEP:-}" != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi

step() { printf '\n== %s\n' "$*"; }

step "pack (prepack builds dist/)"
(cd "$sdk_dir" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball="$(ls "$work"/*.tgz)"
echo "$tarball"

step "tarball contents"
tar tzf "$tarball" | sort | tee "$work/contents.txt"
for f in package/dist/index.js package/dist/index.d.ts package/dist/generated/api.d.ts \
  package/dist/generated/operations.js package/README.md; do
  grep -qx "$f" "$work/contents.txt" || { echo "missing from tarball: $f" >&2; exit 1; }
done
if grep -E '^package/(src|test|scripts)/' "$work/contents.txt"; then echo "sources leaked into the tarball" >&2; exit 1; fi

step "install into an empty project"
mkdir "$work/consumer"
cd "$work/consumer"
cat > package.json <<'JSON'
{ "name": "sdk-consumer", "version": "0.0.0", "private": true, "type": "module" }
JSON
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" "@types/node@^20"

step "typecheck a strict NodeNext consumer against the installed .d.ts"
cat > tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": false,
    "types": ["node"]
  },
  "include": ["check.ts"]
}
JSON
cat > check.ts <<'TS'
import { createClient, isSvcApiError, type components, type SvcClient } from '@svcplatform/sdk';
import { operations } from '@svcplatform/sdk/operations';

type Incident = components['schemas']['PublicIncident'];
const client: SvcClient = createClient({ baseUrl: process.argv[2] ?? 'http://127.0.0.1:9', retries: 0 });
const incidents: Incident[] = await client.publicIncidentsList();
const title: string | undefined = incidents[0]?.title;
// If the .d.ts did not resolve, these would be `any` and the expectations below would be unused.
// @ts-expect-error an unknown body field is a compile error
void client.publicClientErrorsCreate({ body: { error_id: 'e', message: 'm', nope: 1 } });
// @ts-expect-error a required path parameter is missing
void client.publicCaptchaConfigGet({ path: {} });
const ids: string[] = Object.keys(operations);
try {
  await client.publicAssetGet({ path: { id: 'x' } });
} catch (e) {
  if (isSvcApiError(e)) console.log(`publicAssetGet refused: ${e.status} ${e.code}`);
}
console.log(JSON.stringify({ incidents: incidents.length, title, operations: ids.length }));
TS
node "$tsc" -p tsconfig.json
echo "typecheck ok"

step "run it (plain node, no TypeScript) against a stub server"
cat > run.mjs <<'JS'
import { createServer } from 'node:http';
import { createClient, isSvcApiError } from '@svcplatform/sdk';

const server = createServer((req, res) => {
  if (req.url === '/api/v2/public/incidents') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify([{ id: '1', title: 'Packed', started_at: '2026-01-01T00:00:00Z', message: null }]));
  } else {
    res.writeHead(404, { 'Content-Type': 'application/problem+json', 'X-Request-Id': 'r1' });
    res.end(JSON.stringify({ type: '/docs/errors#not-found', title: 'Not found', status: 404, detail: 'No.', code: 'not-found', request_id: 'r1' }));
  }
});
server.listen(0, '127.0.0.1', async () => {
  const client = createClient({ baseUrl: `http://127.0.0.1:${server.address().port}`, retries: 0 });
  try {
    const [incident] = await client.publicIncidentsList();
    if (incident?.title !== 'Packed') throw new Error('unexpected answer');
    const err = await client.publicResellerByHostGet({ path: { hostname: 'x' } }).catch((e) => e);
    if (!isSvcApiError(err, 'not-found') || err.requestId !== 'r1') throw new Error(`unexpected error: ${err}`);
    console.log('runtime ok');
  } finally {
    server.close();
  }
});
JS
node run.mjs

step "load it from CommonJS too (require(esm) through the exports' default condition, Node 20.19+)"
mkdir "$work/cjs-consumer"
ln -s "$work/consumer/node_modules" "$work/cjs-consumer/node_modules"
cat > "$work/cjs-consumer/package.json" <<'JSON'
{ "name": "sdk-cjs-consumer", "version": "0.0.0", "private": true }
JSON
cat > "$work/cjs-consumer/run.cjs" <<'JS'
const { createClient, isSvcApiError } = require('@svcplatform/sdk');
const { operations } = require('@svcplatform/sdk/operations');
if (typeof createClient !== 'function' || typeof isSvcApiError !== 'function') throw new Error('no createClient');
if (Object.keys(operations).length < 100) throw new Error('no operations');
console.log(`require ok on node ${process.version}`);
JS
(cd "$work/cjs-consumer" && node --no-warnings run.cjs)

# Customers run the SDK on every maintained Node line. The other majors' official binaries are on the
# npm registry as node-<os>-<arch> packages (what the `node` package installs), so no other download is
# needed; they are kept in a cache between runs. PACK_CHECK_NODES="" checks on this Node alone.
for major in ${PACK_CHECK_NODES-22 24}; do
  step "ESM and CommonJS on Node $major"
  platform="node-$(node -p 'process.platform')-$(node -p "process.arch === 'x64' ? 'x64' : process.arch")"
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/svc-pack-check/$platform-$major"
  if [[ ! -x "$cache/package/bin/node" ]]; then
    mkdir -p "$cache"
    (cd "$cache" && npm pack --silent "$platform@$major" >/dev/null && tar xzf "$platform"-*.tgz package/bin/node && rm -f "$platform"-*.tgz)
  fi
  other="$cache/package/bin/node"
  "$other" --version
  [[ "$("$other" -p 'process.versions.node.split(".")[0]')" == "$major" ]] || { echo "not Node $major: $other" >&2; exit 1; }
  (cd "$work/consumer" && "$other" run.mjs)
  (cd "$work/cjs-consumer" && "$other" --no-warnings run.cjs)
done

step "pack check passed"
