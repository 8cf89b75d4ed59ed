// Who presents the bearer credential (DECISIONS.md §3): a session's access token (EdDSA JWT), a
// personal API token (`svc_pat_{id}_{secret}`) or an application token (`svc_app_{id}_{secret}`),
// the last one acting for a user with `X-Acting-As-User`. Each costs one indexed read; API and
// application tokens are compared as keyed digests in constant time. What the caller may do with it
// is decided afterwards, per operation (authorize.ts).
import { AccessTokenError, verifyAccessToken } from '../auth/crypto/access-tokens.js';
import { keyedDigest, parseApplicationToken, parsePersonalApiToken, safeEqual } from '../auth/crypto/tokens.js';
import type { Db } from '../db/client.js';
import { findLiveSession } from '../auth/sessions.js';
import { DeferredSessionCheck } from './deferred-session.js';
import { bearerToken, unauthenticated } from '../http/authenticate.js';
import { forbidden, invalidFieldValue } from '../http/errors.js';
import type { RequestContext } from '../http/handler.js';
import type { GrantRow } from './reach.js';
import { isUuid } from '../http/uuid.js';

export const ACTING_AS_HEADER = 'x-acting-as-user';

/**
 * What a token of an unknown id is compared against: its digest is computed and compared all the
 * same, so a known id with a wrong secret and an unknown id cost the same time (issue 26).
 */
const DUMMY_DIGEST = Buffer.alloc(32);
const secretMatches = (stored: Buffer | undefined, pepper: Buffer, raw: string): boolean =>
  // Both sides evaluated whatever `stored` is: no short cut for an unknown id.
  safeEqual(stored ?? DUMMY_DIGEST, keyedDigest(pepper, raw)) && stored !== undefined;

/**
 * How long a refused API or application token takes at least, from the start of its check. What is
 * left of a difference between a known id with a wrong secret and an unknown id (PostgreSQL reading a
 * row or not: 10-20 µs, told apart at p < 0.01 over 300 samples) ends at the same deadline. The timer
 * is set as the check starts: set at the refusal, its deadline would follow the event loop's clock of
 * that moment, which moved on with the work done (still told apart at p = 0.04 over 800 samples).
 */
const TOKEN_REFUSAL_FLOOR_MS = 5; // whole milliseconds of the event loop's clock: 4-5 ms of real time

/** Started with a token's check: `refuse` answers 401 at the floor, `pass` lets the caller through. */
function refusalFloor(): { refuse: () => Promise<never>; pass: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const floor = new Promise<void>((resolve) => (timer = setTimeout(resolve, TOKEN_REFUSAL_FLOOR_MS)));
  return {
    refuse: async () => {
      await floor;
      throw unauthenticated();
    },
    pass: () => clearTimeout(timer),
  };
}

/** Last use is written at most once a minute per token or delegation, never once per request. */
const LAST_USE_RESOLUTION_MS = 60_000;

export type Credential =
  | {
      kind: 'session';
      userId: string;
      sessionId: string;
      elevatedUntil: Date | null;
      elevationEpoch: number;
      tokenExpiresAt: Date;
      /** Present when the operation's own statement checks the session (deferred-session.ts). */
      deferred?: DeferredSessionCheck;
    }
  | {
      kind: 'token';
      userId: string;
      tokenId: string;
      /** null: a legacy unrestricted token. */
      grants: GrantRow[] | null;
      adminAuthorized: boolean;
      /** The owner's system permissions now, for admin-only grants. */
      systemPermissions: string[];
    }
  | { kind: 'application'; applicationId: string; capabilities: string[] }
  | { kind: 'acting_as'; applicationId: string; userId: string; delegationId: string; capabilities: string[] };


export interface ResolveOptions {
  /**
   * A session's liveness is left to the operation's statement (deferred-session.ts): the credential
   * is then never elevated, and its check is pending until settled.
   */
  deferSessionCheck?: boolean;
}

export async function resolveCredential(ctx: RequestContext, options: ResolveOptions = {}): Promise<Credential> {
  const token = bearerToken(ctx.headers.authorization);
  if (token === null) throw unauthenticated();
  const actingAs = ctx.header(ACTING_AS_HEADER);
  if (actingAs !== undefined && !token.startsWith('svc_app_')) {
    throw invalidFieldValue('X-Acting-As-User is for application tokens only.', [
      { location: 'header', pointer: 'X-Acting-As-User', message: 'only with an application token' },
    ]);
  }
  if (token.startsWith('svc_pat_')) return personalToken(ctx, token);
  if (token.startsWith('svc_app_')) return applicationToken(ctx, token, actingAs);
  return session(ctx, token, options.deferSessionCheck ?? false);
}

async function session(ctx: RequestContext, token: string, defer: boolean): Promise<Credential> {
  const now = ctx.clock.now();
  let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
  try {
    claims = await verifyAccessToken(ctx.keys, token, now);
  } catch (err) {
    // Only a bad token is the caller's fault; a failed key lookup is ours and stays a 500.
    if (err instanceof AccessTokenError) throw unauthenticated();
    throw err;
  }
  if (defer) {
    return {
      kind: 'session',
      userId: claims.sub,
      sessionId: claims.sid,
      // Elevation needs the session's epoch, which only the ordinary read gives: none here.
      elevatedUntil: null,
      elevationEpoch: claims.elevationEpoch,
      tokenExpiresAt: claims.exp,
      deferred: new DeferredSessionCheck(claims.sid, claims.sub, now),
    };
  }
  const live = await findLiveSession(ctx.sql, claims.sid, now);
  if (!live || live.user_id !== claims.sub) throw unauthenticated();
  return {
    kind: 'session',
    userId: claims.sub,
    sessionId: claims.sid,
    // Elevated only within the session's current epoch: leaving elevation ended the earlier ones.
    elevatedUntil: claims.elevationEpoch === live.elevation_epoch ? claims.elevatedUntil : null,
    elevationEpoch: live.elevation_epoch,
    tokenExpiresAt: claims.exp,
  };
}

interface TokenRow {
  user_id: string;
  secret_digest: Buffer;
  grants: { grants: GrantRow[] } | null;
  admin_authorized: boolean;
  last_used_at: Date | null;
  system_permissions: string[];
}

async function personalToken(ctx: RequestContext, raw: string): Promise<Credential> {
  const parsed = parsePersonalApiToken(raw);
  if (!parsed) throw unauthenticated();
  // Before the lookup: a known id costs PostgreSQL a row more than an unknown one (refusalFloor).
  const floor = refusalFloor();
  const now = ctx.clock.now();
  const [[row], pepper] = await Promise.all([
    ctx.sql<TokenRow[]>`
      select t.user_id, t.secret_digest, t.grants, t.admin_authorized, t.last_used_at, u.system_permissions
      from api_tokens t join users u on u.id = t.user_id and u.deleted_at is null
      where t.id = ${parsed.tokenId} and t.revoked_at is null and (t.expires_at is null or t.expires_at > ${now})`,
    ctx.pepper('apiTokenDigest'),
  ]);
  if (!secretMatches(row?.secret_digest, pepper, raw) || !row) return floor.refuse();
  floor.pass();
  if (stale(row.last_used_at, now)) await touch(ctx.sql, 'api_tokens', parsed.tokenId, now);
  return {
    kind: 'token',
    userId: row.user_id,
    tokenId: parsed.tokenId,
    grants: row.grants?.grants ?? null,
    adminAuthorized: row.admin_authorized,
    systemPermissions: row.system_permissions,
  };
}

interface ApplicationRow {
  capabilities: string[];
  token_digest: Buffer;
  delegation_id: string | null;
  delegated: string[] | null;
  delegation_used_at: Date | null;
}

async function applicationToken(ctx: RequestContext, raw: string, actingAs: string | undefined): Promise<Credential> {
  const parsed = parseApplicationToken(raw);
  if (!parsed) throw unauthenticated();
  if (actingAs !== undefined && !isUuid(actingAs)) {
    throw invalidFieldValue('X-Acting-As-User must be a user id (uuid).', [
      { location: 'header', pointer: 'X-Acting-As-User', message: 'not a uuid' },
    ]);
  }
  const userId = actingAs?.toLowerCase() ?? null;
  const floor = refusalFloor();
  const [[row], pepper] = await Promise.all([
    ctx.sql<ApplicationRow[]>`
      select a.capabilities, a.token_digest, d.id as delegation_id, d.capabilities as delegated,
             d.last_used_at as delegation_used_at
      from applications a
      left join (application_delegations d join users u on u.id = d.user_id and u.deleted_at is null)
        on d.application_id = a.id and d.user_id = ${userId} and d.revoked_at is null
      where a.id = ${parsed.applicationId}`,
    ctx.pepper('apiTokenDigest'),
  ]);
  if (!secretMatches(row?.token_digest, pepper, raw) || !row) return floor.refuse();
  floor.pass();
  if (userId === null) return { kind: 'application', applicationId: parsed.applicationId, capabilities: row.capabilities };
  // An unknown user and a user who never delegated (or revoked) answer alike.
  if (row.delegation_id === null) throw forbidden('That user has no live delegation to this application.');
  const now = ctx.clock.now();
  if (stale(row.delegation_used_at, now)) await touch(ctx.sql, 'application_delegations', row.delegation_id, now);
  return {
    kind: 'acting_as',
    applicationId: parsed.applicationId,
    userId,
    delegationId: row.delegation_id,
    capabilities: row.delegated ?? [],
  };
}

const stale = (lastUsed: Date | null, now: Date): boolean =>
  lastUsed === null || now.getTime() - lastUsed.getTime() >= LAST_USE_RESOLUTION_MS;

/** The conditional write makes concurrent requests of many processes record one use per minute. */
async function touch(db: Db, table: 'api_tokens' | 'application_delegations', id: string, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - LAST_USE_RESOLUTION_MS);
  await db`
    update ${db(table)} set last_used_at = ${now}
    where id = ${id} and (last_used_at is null or last_used_at <= ${cutoff})`;
}
