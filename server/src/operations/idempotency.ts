// Idempotency-Key on every POST that starts an operation (DECISIONS.md §4) or creates something (§6): the
// same key from the same caller within 24 hours answers the first answer again and starts nothing new; the
// same key with another request is 422 `idempotency-key-reused`. Every operation that declares the header
// gets it from the binding (http/bind.ts, `keyedOperation`): the handler runs inside the key's transaction. The key's row is inserted first in the transaction that does
// the work: a concurrent retry's insert waits on the key's unique index until that transaction ends,
// then reads the stored answer (or, if the first failed and rolled back, does the work itself). Only
// answers that did something are kept: a refused request leaves no row, so a corrected retry may reuse it.
import { createHash } from 'node:crypto';
import type { Db } from '../db/client.js';
import { unprocessable } from '../http/errors.js';
import type { RequestContext, UserAuth } from '../http/handler.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface StoredAnswer<S extends number, B> {
  status: S;
  body: B;
}

/** Who "the same caller" is: the user of a session, the token, the application acting as a user. */
export function callerKey(auth: UserAuth): string {
  switch (auth.kind) {
    case 'session':
      return `user:${auth.userId}`;
    case 'token':
      return `token:${auth.tokenId}`;
    case 'acting_as':
      return `application:${auth.applicationId}:user:${auth.userId}`;
  }
}

/** Objects with their keys sorted, so the same request sent with another key order has the same digest. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function requestDigest(operationId: string, request: unknown): Buffer {
  return createHash('sha256')
    .update(operationId)
    .update('\0')
    .update(JSON.stringify(canonical(request)))
    .digest();
}

/** Marks a context whose request's key the binding already claimed: idempotent() then only runs `work`. */
const CLAIMED = Symbol('idempotency key claimed');
export function claimedContext<C extends RequestContext>(ctx: C): C {
  (ctx as C & { [CLAIMED]?: true })[CLAIMED] = true;
  return ctx;
}

/**
 * Runs `work` in a transaction, at most once per Idempotency-Key (when the request carries one).
 * `request` is what makes two requests the same: the path parameters and the body.
 */
export async function idempotent<S extends number, B>(
  ctx: RequestContext,
  auth: UserAuth,
  operationId: string,
  request: unknown,
  work: (tx: Db) => Promise<StoredAnswer<S, B>>,
): Promise<StoredAnswer<S, B>> {
  // Inside the binding's claim (its transaction): the work is all that is left to do.
  if ((ctx as RequestContext & { [CLAIMED]?: true })[CLAIMED]) return work(ctx.sql);
  const key = ctx.header('idempotency-key');
  if (key === undefined) return ctx.sql.begin(work);
  const caller = callerKey(auth);
  const digest = requestDigest(operationId, request);
  const now = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    // A key older than the window is forgotten: the request is a new one.
    await tx`
      delete from idempotency_keys
      where caller = ${caller} and key = ${key} and created_at <= ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}`;
    const claimed = await tx`
      insert into idempotency_keys (caller, key, request_digest, status, body, created_at)
      values (${caller}, ${key}, ${digest}, 0, 'null'::json, ${now})
      on conflict (caller, key) do nothing
      returning 1`;
    if (claimed.length === 0) {
      const [first] = await tx<{ request_digest: Buffer; status: number; body: string }[]>`
        select request_digest, status, body::text as body from idempotency_keys where caller = ${caller} and key = ${key}`;
      if (!first || !first.request_digest.equals(digest)) throw keyReused();
      return { status: first.status as S, body: (await openAnswer(ctx, JSON.parse(first.body))) as B };
    }
    const answer = await work(tx);
    // Sealed: a create's answer may carry a secret shown once (a new API token's).
    const sealed = { sealed: await ctx.box.seal('idempotent-answer', JSON.stringify(answer.body ?? null)) };
    await tx`
      update idempotency_keys set status = ${answer.status}, body = ${JSON.stringify(sealed)}::text::json
      where caller = ${caller} and key = ${key}`;
    return answer;
  });
}

/**
 * The stored answer to this key, before any transaction: for a handler that claims its key itself
 * (`claimsKeyItself`) after slow work that must hold nothing, so a retry of a request that succeeded is
 * answered again rather than refused by that request's own effect. idempotent() still decides a race.
 */
export async function storedAnswer(
  ctx: RequestContext,
  auth: UserAuth,
  operationId: string,
  request: unknown,
): Promise<StoredAnswer<number, unknown> | undefined> {
  const key = ctx.header('idempotency-key');
  if (key === undefined) return undefined;
  const since = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS);
  const [first] = await ctx.sql<{ request_digest: Buffer; status: number; body: string }[]>`
    select request_digest, status, body::text as body from idempotency_keys
    where caller = ${callerKey(auth)} and key = ${key} and created_at > ${since}`;
  if (!first) return undefined;
  if (!first.request_digest.equals(requestDigest(operationId, request))) throw keyReused();
  return { status: first.status, body: await openAnswer(ctx, JSON.parse(first.body)) };
}

const keyReused = () =>
  unprocessable(
    'idempotency-key-reused',
    'This Idempotency-Key was used for a different request in the last 24 hours; use a new key.',
  );

/** Marks a handler that runs slow work outside any transaction and then calls idempotent() itself. */
const OWN_KEY = Symbol('claims its Idempotency-Key itself');
export function claimsKeyItself<H extends (...args: never[]) => unknown>(handler: H): H {
  return Object.assign(handler, { [OWN_KEY]: true });
}
export const claimsOwnKey = (handler: unknown): boolean =>
  typeof handler === 'function' && (handler as { [OWN_KEY]?: true })[OWN_KEY] === true;

/** A stored answer: sealed (current rows) or plain JSON (rows kept before answers were sealed). */
async function openAnswer(ctx: RequestContext, stored: unknown): Promise<unknown> {
  if (
    stored !== null &&
    typeof stored === 'object' &&
    Object.keys(stored).length === 1 &&
    typeof (stored as { sealed?: unknown }).sealed === 'string'
  ) {
    return JSON.parse(
      (await ctx.box.open('idempotent-answer', (stored as { sealed: string }).sealed)).toString('utf8'),
    );
  }
  return stored;
}
