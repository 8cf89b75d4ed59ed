// A forwarding (server/src/edge/forwarding.ts) in a process of its own, for a test to kill -9 as an edge
// dies: FORWARDING (JSON: host, mode, unit id, ports and ingress rules) applied, then `ready` on stdout.
import type { DesiredPort } from '../../server/src/edge/desired.js';
import { compileRule } from '../../server/src/edge/firewall.js';
import { startForwarding } from '../../server/src/edge/forwarding.js';

const spec = JSON.parse(process.env.FORWARDING ?? '{}') as {
  host: string;
  unitId: string;
  ports: DesiredPort[];
  rules: Parameters<typeof compileRule>[0][];
};
const forwarding = await startForwarding({
  host: spec.host,
  mode: 'kernel',
  log: { info: () => {}, warn: () => {} },
  ours: async (ids) => new Set(ids.filter((id) => id === spec.unitId)),
});
await forwarding.apply(spec.ports, new Map([[spec.unitId, spec.rules.map(compileRule)]]));
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);
