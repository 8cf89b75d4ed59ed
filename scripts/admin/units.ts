// `npm run admin -- units stop --all | SERVICE`: an operator's way to stop units, through the substrate
// driver that runs them (each unit's agent drains and ends its program with it), instead of killing
// processes by name. The database keeps what should run: the next `npm start` (its reconcile) starts
// those units again. A server running meanwhile does the same at its next reconcile, so stop the
// server first to keep them stopped.
import type { Config } from '../../server/src/config.js';
import type { Sql } from '../../server/src/db/client.js';
import { createSubstrate } from '../../server/src/substrate/index.js';
import { AdminError } from './database.js';

export async function stopUnits(sql: Sql, config: Config, service: string | null): Promise<string> {
  const units = await sql<{ id: string }[]>`
    select r.id from service_resources r
    where r.kind in ('virtual_machine', 'workload') and r.deleted_at is null
      and (${service}::uuid is null or r.service_instance_id = ${service}::uuid)
    order by r.created_at, r.id`;
  if (service !== null && units.length === 0) {
    const [known] = await sql`select 1 from service_instances where id = ${service}::uuid`;
    if (!known) throw new AdminError(`no service instance ${service}`);
  }
  const substrate = createSubstrate(config.substrate, { dataDir: config.dataDir, lxd: config.lxd });
  try {
    for (const unit of units) await substrate.stopUnit(unit.id);
  } finally {
    // --all: also any unit the database no longer lists (a local unit a deleted service left behind).
    await substrate.close(service === null ? { stopUnits: true } : {});
  }
  const what = service === null ? 'every unit' : `the units of ${service}`;
  return `stopped ${what} (${units.length}); the next \`npm start\` starts again those that should run`;
}
