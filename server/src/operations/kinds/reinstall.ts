// VPS reinstall (document 2 §4 "VPS reinstall", §3 "VPS ... reinstall completes"): stop the machine,
// wipe its volume, install the image, clear the old credentials and boot the fresh install (vm_access),
// then hand the unit its contract again (boot) with the same public endpoints.
import type { Db } from '../../db/client.js';
import { awaitAcknowledgement, writeContract } from '../contract.js';
import type { OperationDefinition } from '../run.js';
import { clearPassword, machineCredentials } from '../../features/vps-access/store.js';
import type { OperationRow } from '../store.js';
import { loadSubject, unitSpecOf, type ServiceSubject } from './subject.js';

interface ReinstallState extends ServiceSubject {
  osImage: string;
  generation: number;
}

export const reinstall: OperationDefinition<ReinstallState> = {
  async load(ctx, op: OperationRow) {
    const subject = await loadSubject(ctx, op);
    return {
      ...subject,
      osImage: String(op.input.os_image),
      generation: Number(subject.unit.signal_generation),
    };
  },
  async begin(tx: Db, s, now) {
    await tx`update service_resources set status = 'reinstalling', updated_at = ${now} where id = ${s.unit.id}`;
  },
  phases: [
    { name: 'stop', progress: 10, run: (s, ctx) => ctx.substrate.stopUnit(s.unit.id) },
    { name: 'wipe', progress: 25, run: (s, ctx) => ctx.substrate.wipeVolume(s.volume.id) },
    { name: 'install', progress: 50, run: (s, ctx) => ctx.substrate.installImage(s.volume.id, s.osImage) },
    {
      name: 'vm_access',
      progress: 75,
      async run(s, ctx) {
        // Old credentials cleared (seed §3); the customer's keys are kept and the root password is not
        // (DECISIONS.md §8 "VPS access": they reset it again).
        await clearPassword(ctx.sql, s.unit.id, ctx.clock.now());
        await ctx.substrate.resetMachineAccess(s.unit.id, s.volume.id, await machineCredentials(ctx.sql, s.unit.id));
        await ctx.substrate.startUnit(unitSpecOf(s));
      },
    },
    {
      name: 'boot',
      progress: 90,
      async run(s, ctx) {
        s.generation = await writeContract(ctx, s);
        await awaitAcknowledgement(ctx, s.unit.id, s.generation);
      },
    },
  ],
  async complete(tx: Db, s, now) {
    await tx`
      update service_resources set status = 'running', os_image = ${s.osImage}, updated_at = ${now}
      where id = ${s.unit.id}`;
    // The fresh install was booted: a service that was stopped runs now.
    await tx`
      update service_instances set status = 'running', power = 'on', updated_at = ${now}
      where id = ${s.service.id} and status in ('running', 'stopped')`;
  },
  async fail(tx: Db, op, now) {
    await tx`update service_resources set status = 'failed', updated_at = ${now} where id = ${op.resource_id}`;
  },
};
