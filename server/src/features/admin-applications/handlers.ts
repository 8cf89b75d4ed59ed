// Staff: registering applications and rotating their tokens (DECISIONS.md §4, `manage_applications`).
// The token (`svc_app_{id}_{secret}`) is shown once; only its keyed digest is kept.
import { randomUUID } from 'node:crypto';
import { formatApplicationToken, keyedDigest, newSecret } from '../../auth/crypto/tokens.js';
import { actorOf, type AuditActor, recordPlatformEvent } from '../../audit/record.js';
import { findCapability } from '../../authz/capabilities.js';
import { requireSystemPermission } from '../../authz/staff.js';
import { invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { credentialName } from '../api-tokens/name.js';
import * as store from './store.js';

async function mintToken(ctx: RequestContext, applicationId: string): Promise<{ token: string; digest: Buffer }> {
  const token = formatApplicationToken(applicationId, newSecret());
  return { token, digest: keyedDigest(await ctx.pepper('apiTokenDigest'), token) };
}

const toApplication = (r: store.ApplicationRow) => ({
  id: r.id,
  name: r.name,
  capabilities: r.capabilities,
  created_at: r.created_at.toISOString(),
  token_rotated_at: r.token_rotated_at.toISOString(),
});

const eventActor = (a: AuditActor) => ({ actor_user_id: a.userId, actor_token_id: a.tokenId ?? null });

export const adminApplicationHandlers: AreaHandlers<'adminApplicationCreate' | 'adminApplicationTokenRotate'> = {
  async adminApplicationCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_applications');
    const name = credentialName(body.name, "An application's");
    body.capabilities.forEach((c, i) => {
      if (!findCapability(c)) {
        throw invalidFieldValue(`Unknown capability "${c}".`, [
          { location: 'body', pointer: `/capabilities/${i}`, message: 'not in the catalogue' },
        ]);
      }
    });
    const id = randomUUID();
    const { token, digest } = await mintToken(ctx, id);
    const row = await ctx.sql.begin(async (tx) => {
      const inserted = await store.insertApplication(
        tx,
        { id, name, capabilities: [...new Set(body.capabilities)].sort(), digest, createdBy: auth.userId },
        ctx.clock.now(),
      );
      await recordPlatformEvent(tx, ctx, {
        action: 'application.created',
        target: { type: 'application', id },
        details: { name, capabilities: inserted.capabilities, ...eventActor(actorOf(auth)) },
      });
      return inserted;
    });
    return { status: 201, body: { application: toApplication(row), token } };
  },

  async adminApplicationTokenRotate({ path, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_applications');
    const id = path.id.toLowerCase();
    const { token, digest } = await mintToken(ctx, id);
    await ctx.sql.begin(async (tx) => {
      if (!(await store.replaceToken(tx, id, digest, ctx.clock.now()))) throw notFound('No such application.');
      await recordPlatformEvent(tx, ctx, {
        action: 'application.token_rotated',
        target: { type: 'application', id },
        details: eventActor(actorOf(auth)),
      });
    });
    return { status: 200, body: { token } };
  },
};
