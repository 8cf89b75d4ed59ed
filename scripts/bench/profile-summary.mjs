// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof=DIR`): where the samples' self time
// went, by function and by package, as shares of the busy (non-idle) time.
//
//   node scripts/bench/profile-summary.mjs FILE.cpuprofile [--top=30]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
if (positionals.length !== 1) {
  console.error('usage: node scripts/bench/profile-summary.mjs FILE.cpuprofile [--top=30]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const top = Number(values.top);

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfSamples = new Map();
for (const id of profile.samples) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
const where = (url) => {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node';
  const m = /\/(server|scripts|generated|sdk|cli)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
};

let busy = 0;
const fns = new Map();
const pkgs = new Map();
const special = new Map();
for (const [id, count] of selfSamples) {
  const node = byId.get(id);
  const { functionName, url, lineNumber } = node.callFrame;
  if (IDLE.has(functionName)) {
    special.set(functionName, (special.get(functionName) ?? 0) + count);
    if (functionName === '(idle)') continue;
  }
  busy += count;
  const fnKey = `${functionName || '(anonymous)'}  ${where(url)}:${lineNumber + 1}`;
  fns.set(fnKey, (fns.get(fnKey) ?? 0) + count);
  const pkg = IDLE.has(functionName) ? functionName : where(url).split('/').slice(0, url?.includes('node_modules') ? 2 : 1).join('/');
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + count);
}
const pct = (n) => `${((100 * n) / busy).toFixed(1).padStart(5)} %`;
const total = profile.samples.length;
console.log(`${total} samples, ${(100 * (total - (special.get('(idle)') ?? 0)) / total).toFixed(1)} % busy`);
console.log('\nby package / area (self time, share of busy time)');
for (const [k, v] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log('\nby function');
for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
