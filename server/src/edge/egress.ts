// Egress enforcement on the local substrate (DECISIONS.md §6 "Network", README "Firewall"): a unit's
// programs run in its own network namespace, joined to the host by a veth pair
// (substrate/local/sandbox/network.ts); the host's guard sends every new connection a unit starts to
// SVC-EGRESS, which jumps to the unit's chain by the veth it came in on (`-i`), for IPv4 (units have no
// IPv6; the IPv6 chains are kept so rules written for both families stay whole). Each chain is replaced
// in one iptables-restore transaction, so a connection meets the old rules or the new ones, never a mix. Only units with enabled egress rules
// have a chain; a unit whose rules went (or that was deleted) loses its jump and chain.
//
// Several edges may share the host (one per database in the tests): each touches only the chains of its
// own database's units. Rules stay in force when the edge stops: the next edge adopts them (it finds its
// units in SVC-EGRESS by the comment naming the unit), so a restart never opens a machine's egress.
import type { Logger } from 'pino';
import { ensureHostGuard, networkConfinable } from '../substrate/local/sandbox/network.js';
import { unitVethName } from '../substrate/local/sandbox/names.js';
import { must, run } from './iptables.js';
import { chainRules, EGRESS_CHAIN, restoreScript, unitChain, type EgressRule } from './egress-rules.js';

/** Per unit (resource id), its enabled egress rules in evaluation order. */
export type EgressRules = Map<string, EgressRule[]>;

export interface EgressEnforcer {
  /** Whether this edge holds units' connections to their egress rules. */
  readonly enforced: boolean;
  /** Makes the kernel's rules those of `rules` for the units of this database; throws when it could not. */
  apply(rules: EgressRules): Promise<void>;
}

type Log = Pick<Logger, 'info' | 'warn'>;
const FAMILIES = [
  { family: 4 as const, tables: 'iptables', restore: 'iptables-restore' },
  { family: 6 as const, tables: 'ip6tables', restore: 'ip6tables-restore' },
];
const COMMENT = 'svc-unit ';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const jump = (unitId: string) => [
  EGRESS_CHAIN,
  '-i',
  unitVethName(unitId),
  '-m',
  'comment',
  '--comment',
  `${COMMENT}${unitId}`,
  '-j',
  unitChain(unitId),
];

/** The enforcer of this host, or one that enforces nothing (and says so) where the host cannot. */
export async function startEgress(
  log: Log,
  ours: (unitIds: string[]) => Promise<Set<string>>,
): Promise<EgressEnforcer> {
  if (!networkConfinable()) {
    log.info('egress rules not enforced: needs root, iproute2, nsenter and iptables');
    return { enforced: false, apply: async () => undefined };
  }
  try {
    await prepare();
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'egress rules not enforced: the host refused its guard rules');
    return { enforced: false, apply: async () => undefined };
  }
  // What each unit's chain holds now (its rules and the cgroup they are bound to), so an unchanged unit
  // costs nothing; adopted units start unknown, so they are rewritten or removed on the first apply.
  const applied = new Map<string, string>();
  const listed = await listedUnits();
  for (const unitId of await ours(listed)) applied.set(unitId, '');

  return {
    enforced: true,
    async apply(rules) {
      for (const [unitId, unitRules] of rules) {
        const lines = FAMILIES.map((f) => chainRules(unitChain(unitId), unitRules, f.family));
        const fingerprint = JSON.stringify(lines);
        if (applied.get(unitId) === fingerprint) continue;
        for (const [i, f] of FAMILIES.entries()) {
          await must(f.restore, ['-w', '--noflush'], restoreScript(unitChain(unitId), lines[i]!));
          if ((await run(f.tables, ['-w', '-C', ...jump(unitId)])).code !== 0)
            await must(f.tables, ['-w', '-A', ...jump(unitId)]);
        }
        applied.set(unitId, fingerprint);
      }
      for (const unitId of [...applied.keys()]) {
        if (rules.has(unitId)) continue;
        await remove(unitId);
        applied.delete(unitId);
      }
    },
  };
}

/**
 * SVC-EGRESS in both families: the IPv4 one is entered from the host's guard (network.ts), which it makes;
 * a jump from OUTPUT left by an edge of the cgroup-matching days goes.
 */
async function prepare(): Promise<void> {
  await ensureHostGuard();
  for (const f of FAMILIES) {
    if ((await run(f.tables, ['-w', '-n', '-L', EGRESS_CHAIN])).code !== 0)
      await run(f.tables, ['-w', '-N', EGRESS_CHAIN]);
    const old = ['OUTPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-j', EGRESS_CHAIN];
    while ((await run(f.tables, ['-w', '-D', ...old])).code === 0);
  }
}

/** The units SVC-EGRESS jumps for (of any database on this host), from the comments of their jumps. */
async function listedUnits(): Promise<string[]> {
  const units = new Set<string>();
  for (const f of FAMILIES) {
    const out = await run(f.tables, ['-w', '-S', EGRESS_CHAIN]);
    for (const match of out.stdout.matchAll(/--comment "?svc-unit ([0-9a-f-]{36})"?/g))
      if (UUID.test(match[1]!)) units.add(match[1]!);
  }
  return [...units];
}

/**
 * Removes the chains of this database's units (a test database that is dropped leaves no rules behind);
 * an edge that stops keeps them, so this is never part of stopping one.
 */
export async function releaseEgress(ours: (unitIds: string[]) => Promise<Set<string>>): Promise<void> {
  if (!networkConfinable()) return;
  for (const unitId of await ours(await listedUnits())) await remove(unitId);
}

async function remove(unitId: string): Promise<void> {
  for (const f of FAMILIES) {
    // Two edges of one database may both have added the jump: every copy goes.
    while ((await run(f.tables, ['-w', '-D', ...jump(unitId)])).code === 0);
    await run(f.tables, ['-w', '-F', unitChain(unitId)]);
    await run(f.tables, ['-w', '-X', unitChain(unitId)]);
  }
}
