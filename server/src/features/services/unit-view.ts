// What a resource reads as (issue 33 item 8): its row says what the platform last made it, the substrate
// what its unit does now. Between a unit's death and the converge that starts it again (up to a minute)
// the row still says `running`; the answer says what the substrate sees instead.
import type { SubstrateDriver, UnitStatus } from '../../substrate/driver.js';
import type { ResourceRow } from './store.js';

export type UnitState = UnitStatus['state'];

/** How long a listing waits for the substrate before it answers without the unit's state. */
const ASK_MS = 2_000;

/** Each unit's state as the substrate reports it now (null: it did not answer in time). */
export async function liveUnitStates(
  substrate: Pick<SubstrateDriver, 'unitState'> | null,
  rows: ResourceRow[],
): Promise<Map<string, UnitState | null>> {
  const units = rows.filter((r) => r.kind !== 'volume' && r.status !== 'provisioning');
  const states = await Promise.all(
    units.map(async (r) => {
      if (!substrate) return null;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ASK_MS)));
      const state = await Promise.race([substrate.unitState(r.id).catch(() => null), late]);
      clearTimeout(timer);
      return state;
    }),
  );
  const byId = new Map<string, UnitState | null>(units.map((r, i) => [r.id, states[i] ?? null]));
  // A volume reports the unit that runs on it.
  for (const volume of rows.filter((r) => r.kind === 'volume')) {
    const unit = units.find((u) => u.volume_id === volume.id);
    byId.set(volume.id, unit ? (byId.get(unit.id) ?? null) : null);
  }
  return byId;
}

/**
 * The status to answer for each row: a unit the platform made `running` but whose processes the substrate
 * sees stopped reads `stopped`, and so does its volume. A unit stopped on purpose is left as its row says (its
 * volume stays `running`, as it always read).
 */
export function seenStatuses(
  rows: ResourceRow[],
  unitStates: ReadonlyMap<string, UnitState | null>,
): Map<string, ResourceRow['status']> {
  const died = (r: ResourceRow) => {
    const state = unitStates.get(r.id);
    // Only a unit the substrate holds and sees not running: `absent` may be a view of the substrate that is
    // not where the units run (an API beside its workers' DATA_DIR); the converge, where they run, decides.
    return r.status === 'running' && state === 'stopped';
  };
  const deadUnits = rows.filter((r) => r.kind !== 'volume' && died(r));
  return new Map(
    rows.map((r) => {
      const dead = r.kind === 'volume' ? r.status === 'running' && deadUnits.some((u) => u.volume_id === r.id) : died(r);
      return [r.id, dead ? 'stopped' : r.status];
    }),
  );
}
