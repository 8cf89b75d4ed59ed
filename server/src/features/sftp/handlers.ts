// SFTP accounts (document 2 §2 "SFTP account", §4 "SFTP"; DECISIONS.md §4, §6 "SFTP"): the routes keep
// one account per service; the edge gateway's SFTP server (server/src/gateway/sftp/) signs it in and
// ends its sessions when these routes disable or rotate it.
import { randomBytes } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Permission } from '../../authz/roles.js';
import { base62Encode } from '../../auth/crypto/base62.js';
import { hashPassword } from '../../auth/crypto/passwords.js';
import type { Db } from '../../db/client.js';
import { conflict, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { hostKeyFingerprint } from '../../gateway/sftp/host-key.js';
import { requireService, requireServiceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import * as store from './store.js';
import type { SftpAccountRow } from './store.js';

/** 144 random bits: far past guessing, so the sign-in limit only guards the gateway's CPU. */
const PASSWORD_BYTES = 18;

async function sftpService(
  db: Db,
  serviceId: string,
  auth: UserAuth,
  permission: Permission,
): Promise<ServiceAccessRow> {
  const access = await requireService(db, { serviceId }, auth, permission);
  if (!(await store.productFeatures(db, access.service.product_id)).includes('sftp')) throw serviceNotFound();
  return access;
}

const notProvisioned = () =>
  unprocessable(
    'sftp-not-provisioned',
    'The service has no SFTP account yet: enable it (PATCH /sftp {"enabled": true}) or rotate its password.',
  );

const writeInProgress = () =>
  conflict('operation-in-progress', 'Another change of this SFTP account is in progress; retry.');

/** The service's slug and a part of its id: readable, and unique without asking the database. */
function usernameOf(service: ServiceAccessRow['service']): string {
  const slug =
    service.slug
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '')
      .slice(0, 40) || 'service';
  return `${slug}.${service.id.replace(/-/g, '').slice(0, 12)}`;
}

function isLockNotAvailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '55P03';
}

/**
 * Runs `change` in a transaction on the account's row lock, taken without waiting: a lock another
 * request holds is its write in progress, answered 409 (the seed's rule), never a queue.
 */
async function underAccountLock<T>(
  ctx: RequestContext,
  serviceId: string,
  change: (tx: Db, account: SftpAccountRow | undefined) => Promise<T>,
): Promise<T> {
  try {
    return (await ctx.sql.begin(async (tx) => change(tx, await store.lockAccount(tx, serviceId)))) as T;
  } catch (err) {
    if (isLockNotAvailable(err)) throw writeInProgress();
    throw err;
  }
}

async function accountBody(ctx: RequestContext, account: SftpAccountRow) {
  return {
    enabled: account.enabled,
    username: account.username,
    host: ctx.config.sftpPublicHost,
    port: ctx.config.sftpPort,
    password_set: account.password_set,
    host_key_fingerprint: await hostKeyFingerprint(ctx.sql, ctx.box, ctx.clock.now()),
  };
}

async function audit(tx: Db, ctx: RequestContext, auth: UserAuth, access: ServiceAccessRow, action: string) {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'service_instance', id: access.service.id },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const sftpHandlers: AreaHandlers<'sftpGet' | 'sftpUpdate' | 'sftpRotate'> = {
  async sftpGet({ path, auth, ctx }) {
    const { service } = await sftpService(ctx.sql, path.id, auth, 'services.read');
    const account = await store.findAccount(ctx.sql, service.id);
    if (!account) throw notProvisioned();
    return { status: 200, body: await accountBody(ctx, account) };
  },

  async sftpUpdate({ path, body, auth, ctx }) {
    const access = await sftpService(ctx.sql, path.id, auth, 'services.manage');
    requireServiceable(access);
    const now = ctx.clock.now();
    const account = await underAccountLock(ctx, access.service.id, async (tx, current) => {
      if (!current) {
        if (!body.enabled) throw notProvisioned();
        const made = await store.insertAccount(tx, {
          serviceId: access.service.id,
          username: usernameOf(access.service),
          enabled: true,
          passwordDigest: null,
          now,
        });
        if (!made) throw writeInProgress();
        await audit(tx, ctx, auth, access, 'sftp.enabled');
        return made;
      }
      if (current.enabled === body.enabled) return current;
      const changed = await store.updateAccount(tx, access.service.id, { enabled: body.enabled }, now);
      await audit(tx, ctx, auth, access, body.enabled ? 'sftp.enabled' : 'sftp.disabled');
      return changed;
    });
    return { status: 200, body: await accountBody(ctx, account) };
  },

  async sftpRotate({ path, auth, ctx }) {
    const access = await sftpService(ctx.sql, path.id, auth, 'services.manage');
    requireServiceable(access);
    const password = base62Encode(randomBytes(PASSWORD_BYTES));
    // The slow digest is made before the lock is taken, so the lock is held for two statements only.
    const passwordDigest = await hashPassword(password);
    const now = ctx.clock.now();
    const account = await underAccountLock(ctx, access.service.id, async (tx, current) => {
      const next = current
        ? await store.updateAccount(tx, access.service.id, { passwordDigest }, now)
        : await store.insertAccount(tx, {
            serviceId: access.service.id,
            username: usernameOf(access.service),
            enabled: true,
            passwordDigest,
            now,
          });
      if (!next) throw writeInProgress();
      await audit(tx, ctx, auth, access, 'sftp.password_rotated');
      return next;
    });
    return {
      status: 200,
      body: {
        username: account.username,
        host: ctx.config.sftpPublicHost,
        port: ctx.config.sftpPort,
        password,
      },
    };
  },
};
