// VPS access (DECISIONS.md §8 "VPS access"; seed 001 §3 "old credentials cleared"): the desired keys and
// root password of a VPS's machine, kept in PostgreSQL and written into the machine by the
// apply_machine_access job (tasks.ts) in the transaction of the change.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { idempotent } from '../../operations/idempotency.js';
import { machinePasswordDigest, newMachinePassword } from '../../substrate/machine-credentials.js';
import { requireService, serviceNotFound } from '../services/access.js';
import { findResource } from '../services/store.js';
import { keysOf } from './keys-request.js';
import * as store from './store.js';
import { applyMachineAccessLater } from './tasks.js';

interface Machine {
  id: string;
  organizationId: string;
  projectId: string;
  serviceId: string;
}

/** The VPS's virtual machine, for a caller who may change the service; anything else is an unknown id. */
async function requireMachine(
  db: Db,
  path: { id: string; resource_id: string },
  auth: UserAuth,
): Promise<Machine> {
  const access = await requireService(db, { serviceId: path.id }, auth, 'services.manage');
  const resource = await findResource(db, access.service.id, path.resource_id);
  if (!resource || access.product_kind !== 'vps' || resource.kind !== 'virtual_machine')
    throw serviceNotFound();
  return {
    id: resource.id,
    organizationId: access.organization_id,
    projectId: access.service.project_id,
    serviceId: access.service.id,
  };
}

async function accessBody(db: Db, machineId: string, row?: store.AccessRow) {
  const { ssh_keys, password_set } = row ?? (await store.findAccess(db, machineId));
  const { host, port } = await store.sshAddress(db, machineId);
  return {
    username: 'root' as const,
    host,
    port,
    password_set,
    ssh_keys: ssh_keys.map(({ name, type, fingerprint, public_key }) => ({
      name,
      type,
      fingerprint,
      public_key,
    })),
  };
}

function audit(tx: Db, ctx: RequestContext, auth: UserAuth, machine: Machine, action: string) {
  return recordAudit(tx, ctx, actorOf(auth), {
    organizationId: machine.organizationId,
    action,
    target: { type: 'resource', id: machine.id },
    projectId: machine.projectId,
    serviceInstanceId: machine.serviceId,
  });
}

export const vpsAccessHandlers: AreaHandlers<
  'vpsAccessGet' | 'vpsAccessSshKeysSet' | 'vpsAccessRootPasswordReset'
> = {
  async vpsAccessGet({ path, auth, ctx }) {
    const machine = await requireMachine(ctx.sql, path, auth);
    return { status: 200, body: await accessBody(ctx.sql, machine.id) };
  },

  async vpsAccessSshKeysSet({ path, body, auth, ctx }) {
    const machine = await requireMachine(ctx.sql, path, auth);
    const keys = keysOf(body.keys);
    const row = await ctx.sql.begin(async (tx) => {
      const saved = await store.setKeys(tx, machine.id, keys, ctx.clock.now());
      await applyMachineAccessLater(tx, machine.id);
      await audit(tx, ctx, auth, machine, 'vps.ssh_keys_set');
      return saved;
    });
    return { status: 200, body: await accessBody(ctx.sql, machine.id, row) };
  },

  async vpsAccessRootPasswordReset({ path, auth, ctx }) {
    return idempotent(ctx, auth, 'vpsAccessRootPasswordReset', { path }, async (tx) => {
      const machine = await requireMachine(tx, path, auth);
      const password = newMachinePassword();
      await store.setPassword(tx, machine.id, await machinePasswordDigest(password), ctx.clock.now());
      await applyMachineAccessLater(tx, machine.id);
      await audit(tx, ctx, auth, machine, 'vps.root_password_reset');
      return { status: 200 as const, body: { password } };
    });
  },
};
