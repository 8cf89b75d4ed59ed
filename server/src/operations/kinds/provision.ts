// Provisioning (POST /admin/subscriptions): the volume, then the machine or workload on it (a machine's
// credentials written by vm_access before it boots), then its contract, and the operation succeeds when the unit's agent acknowledges that contract.
import type { Db } from '../../db/client.js';
import { awaitAcknowledgement, writeContract } from '../contract.js';
import type { OperationDefinition } from '../run.js';
import type { OperationRow } from '../store.js';
import { loadSubject, unitSpecOf, type ServiceSubject } from './subject.js';
import { withGameEnv } from '../../games/unit-env.js';
import { machineCredentials } from '../../features/vps-access/store.js';

interface ProvisionState extends ServiceSubject {
  osImage: string | null;
  generation: number;
}

export const provision: OperationDefinition<ProvisionState> = {
  async load(ctx, op: OperationRow) {
    const subject = await loadSubject(ctx, op);
    const osImage = typeof op.input.os_image === 'string' ? op.input.os_image : null;
    return { ...subject, osImage, generation: Number(subject.unit.signal_generation) };
  },
  phases: [
    {
      name: 'volume',
      progress: 10,
      run: (s, ctx) => ctx.substrate.ensureVolume({ id: s.volume.id, sizeGb: s.volume.size_gb ?? 1 }),
    },
    {
      name: 'machine',
      progress: 35,
      async run(s, ctx) {
        if (s.osImage !== null && (await ctx.substrate.installedImage(s.volume.id)) !== s.osImage) {
          await ctx.substrate.installImage(s.volume.id, s.osImage);
        }
        if (s.unit.kind !== 'virtual_machine') {
          await ctx.substrate.startUnit(await withGameEnv(ctx, s.service.id, unitSpecOf(s)));
        }
      },
    },
    {
      // A machine boots with only the credentials the platform holds (seed §3 "the vm_access setup step").
      name: 'vm_access',
      progress: 45,
      async run(s, ctx) {
        if (s.unit.kind !== 'virtual_machine') return;
        await ctx.substrate.resetMachineAccess(s.unit.id, s.volume.id, await machineCredentials(ctx.sql, s.unit.id));
        await ctx.substrate.startUnit(await withGameEnv(ctx, s.service.id, unitSpecOf(s)));
      },
    },
    {
      name: 'contract',
      progress: 60,
      async run(s, ctx) {
        s.generation = await writeContract(ctx, s);
      },
    },
    {
      name: 'acknowledge',
      progress: 85,
      run: (s, ctx) => awaitAcknowledgement(ctx, s.unit.id, s.generation),
    },
  ],
  async complete(tx: Db, s, now) {
    await tx`
      update service_resources set status = 'running', updated_at = ${now}
      where service_instance_id = ${s.service.id} and deleted_at is null and status = 'provisioning'`;
    // Staff may have suspended or ended the subscription meanwhile: the service follows it, and the
    // convergence job that finishing enqueues (engine.ts) stops what provisioning started.
    await tx`
      update service_instances s
      set status = case sub.status when 'active' then 'running' when 'suspended' then 'suspended' else 'ended' end,
          power = 'on',
          updated_at = ${now}
      from subscriptions sub
      where s.id = ${s.service.id} and sub.id = s.subscription_id and s.status = 'provisioning'`;
  },
  // A provisioning that failed leaves a stopped service: its resources say failed, the operation why.
  async fail(tx: Db, op, now) {
    await tx`
      update service_instances set status = 'stopped', power = 'off', updated_at = ${now}
      where id = ${op.service_instance_id} and status = 'provisioning'`;
    await tx`
      update service_resources set status = 'failed', updated_at = ${now}
      where service_instance_id = ${op.service_instance_id} and deleted_at is null`;
  },
};
