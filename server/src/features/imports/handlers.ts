// Server imports (document 2 §4 "Server imports"; DECISIONS.md §6 "Imports"): list, start, get, cancel.
// A start is an operation holding the service (operations/kinds/import.ts), taken under the service
// row's lock with the import row, so a second start or any other operation answers 409.
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { conflict, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { idempotent } from '../../operations/idempotency.js';
import { startOperation } from '../../operations/engine.js';
import { findProduct } from '../catalog/store.js';
import { requireService, serviceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { toImport } from './mappers.js';
import { checkedAddress } from './remote-host.js';
import * as store from './store.js';

const DEFAULT_PORT = 22;
const DEFAULT_REMOTE_PATH = '.';

async function requireImports(
  db: Db,
  auth: UserAuth,
  serviceId: string,
  permission: 'services.read' | 'services.manage',
): Promise<ServiceAccessRow> {
  const access = await requireService(db, { serviceId }, auth, permission, {
    lock: permission === 'services.manage',
  });
  const product = await findProduct(db, access.service.product_id);
  if (!product?.features.includes('imports')) throw serviceNotFound();
  return access;
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  access: ServiceAccessRow,
  action: 'import.started' | 'import.cancel_requested',
  importId: string,
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'import', id: importId },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const importHandlers: AreaHandlers<'importList' | 'importStart' | 'importGet' | 'importCancel'> = {
  async importList({ path, auth, ctx }) {
    const access = await requireImports(ctx.sql, auth, path.id, 'services.read');
    const imports = await store.listImports(ctx.sql, access.service.id);
    return { status: 200, body: { imports: imports.map(toImport) } };
  },

  async importGet({ path, auth, ctx }) {
    const access = await requireImports(ctx.sql, auth, path.id, 'services.read');
    const row = await store.findImport(ctx.sql, access.service.id, path.import_id);
    if (!row) throw serviceNotFound();
    return { status: 200, body: toImport(row) };
  },

  async importStart({ path, body, auth, ctx }) {
    return idempotent(ctx, auth, 'importStart', { path, body }, async (tx) => {
      const access = await requireImports(tx, auth, path.id, 'services.manage');
      if (!serviceable(access)) {
        throw unprocessable(
          'subscription-not-serviceable',
          `The service cannot be changed now: its subscription is ${access.subscription_status} and the service ${access.service.status}.`,
        );
      }
      if (access.service.status !== 'stopped') {
        throw conflict(
          'service-running',
          `The service is ${access.service.status}; stop it before importing (svcctl power stop ${access.service.id}).`,
        );
      }
      const volumeId = await store.volumeOf(tx, access.service.id);
      if (!volumeId) throw serviceNotFound();
      // Resolved and checked once, here; the operation connects to this address only.
      const address = await checkedAddress(body.host, ctx.config);
      const now = ctx.clock.now();
      const id = randomUUID();
      const op = await startOperation(
        tx,
        {
          serviceId: access.service.id,
          resourceId: volumeId,
          kind: 'import',
          input: { import_id: id, actor: actorOf(auth), request_id: ctx.requestId },
          createdBy: auth.userId,
        },
        now,
      );
      const row = await store.insertImport(
        tx,
        {
          id,
          serviceId: access.service.id,
          volumeId,
          operationId: op.id,
          host: body.host,
          address,
          port: body.port ?? DEFAULT_PORT,
          username: body.username,
          remotePath: body.remote_path ?? DEFAULT_REMOTE_PATH,
          deleteExtraneous: body.delete_extraneous ?? false,
          passwordSealed: await ctx.box.seal('import-password', body.password),
          createdBy: auth.userId,
        },
        now,
      );
      await audit(tx, ctx, auth, access, 'import.started', id);
      return { status: 202 as const, body: toImport(row) };
    });
  },

  async importCancel({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireImports(tx, auth, path.id, 'services.manage');
      const row = await store.findImport(tx, access.service.id, path.import_id, { lock: true });
      if (!row) throw serviceNotFound();
      if (store.FINISHED.includes(row.status)) {
        throw unprocessable(
          'import-finished',
          `The import has ended (${row.status}); there is nothing to cancel.`,
        );
      }
      // Its result is decided once the copy ends (decideOutcome, an update of this locked row): a cancel
      // accepted after that would be answered and then ignored.
      const decided = row.cancel_requested ? null : (await store.decidedOutcome(tx, row.id)).outcome;
      if (decided) {
        throw unprocessable(
          'import-finished',
          `The import's copy has ended (${decided}) and it is cleaning up; there is nothing to cancel.`,
        );
      }
      const cancelled = row.cancel_requested ? row : await store.requestCancel(tx, row.id, ctx.clock.now());
      if (!row.cancel_requested) await audit(tx, ctx, auth, access, 'import.cancel_requested', row.id);
      return { status: 200 as const, body: toImport(cancelled) };
    });
  },
};
