// The cost of egress enforcement (issue 21; server/src/edge/egress.ts): new TCP connections per second
// made from a unit's network namespace whose chain holds 50 egress rules none of which match (so every
// one is evaluated), against the same from a unit with no chain, to a remote host beyond the host's
// forwarding, in interleaved rounds of the same run. Needs what confinement needs (root, iproute2,
// iptables); says so and exits 0 elsewhere.
//
//   npx tsx scripts/bench/egress.ts
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { startEgress } from '../../server/src/edge/egress.js';
import type { EgressRule } from '../../server/src/edge/egress-rules.js';
import {
  ensureHostGuard,
  ensureUnitNetwork,
  networkConfinable,
  removeUnitNetwork,
} from '../../server/src/substrate/local/sandbox/network.js';
import { unitNetnsPath } from '../../server/src/substrate/local/sandbox/names.js';
import { startRemoteHost } from '../../test/support/remote-host.js';

const CONNECTIONS = 400;
const ROUNDS = 5;
const log = { info: () => undefined, warn: (o: unknown, m?: string) => console.warn(m, o) };

// Connects CONNECTIONS times in a row to the listener and prints the seconds it took.
const CLIENT = `
const net = require('node:net');
const [host, port, n] = process.argv.slice(1);
let left = Number(n);
const t = process.hrtime.bigint();
const next = () => {
  if (left-- === 0) return console.log(Number(process.hrtime.bigint() - t) / 1e9);
  const s = net.connect({ host, port: Number(port) }, () => { s.destroy(); next(); });
  s.on('error', (e) => { console.error(e.code); process.exit(1); });
};
next();`;

async function rate(unitId: string, host: string, port: number): Promise<number> {
  const child = spawn(
    'nsenter',
    [
      `--net=${unitNetnsPath(unitId)}`,
      process.execPath,
      '-e',
      CLIENT,
      host,
      String(port),
      String(CONNECTIONS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'close')) as [number];
  if (code !== 0) throw new Error('client failed');
  return CONNECTIONS / Number(out.trim());
}

async function main(): Promise<void> {
  if (!networkConfinable()) {
    console.log('egress bench skipped: needs root, iproute2, nsenter and iptables');
    return;
  }
  const remote = await startRemoteHost(1);
  const { address: host, port } = remote.listeners[0]!;
  const ruled = randomUUID();
  const bare = randomUUID();
  await ensureHostGuard();
  await ensureUnitNetwork(ruled, '100.127.254.1');
  await ensureUnitNetwork(bare, '100.127.254.2');
  // 50 rules, none matching the listener's address: each new connection is compared with all of them.
  const rules: EgressRule[] = Array.from({ length: 50 }, (_, i) => ({
    action: 'block',
    protocol: 'tcp',
    cidr: `10.${i}.0.0/16`,
    port_from: 1,
    port_to: 65535,
  }));
  const egress = await startEgress(log, async (ids) => new Set(ids.filter((id) => id === ruled)));
  await egress.apply(new Map([[ruled, rules]]));
  try {
    const withRules: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      without.push(await rate(bare, host, port));
      withRules.push(await rate(ruled, host, port));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const a = median(withRules);
    const b = median(without);
    console.log(
      `egress: new TCP connections/s from a machine with 50 non-matching egress rules ${a.toFixed(0)}, ` +
        `without rules ${b.toFixed(0)}: ratio ${(a / b).toFixed(2)} (median of ${ROUNDS} interleaved rounds of ${CONNECTIONS})`,
    );
  } finally {
    await egress.apply(new Map());
    await removeUnitNetwork(ruled);
    await removeUnitNetwork(bare);
    await remote.stop();
  }
}

await main();
