// The account-dependent halves of sign-up and forgot-password, run by the job queue. The request
// stores what it was given and queues a job whether or not the address has an account, so the two
// answers take one path and one time (DECISIONS.md §4: they answer alike; issue 26: the probe timed
// them apart when the lookup, the token and the mail were made on the request path).
import { randomUUID } from 'node:crypto';
import { digestEmailToken, newEmailToken } from '../../auth/crypto/tokens.js';
import type { Db, Sql } from '../../db/client.js';
import { enqueue } from '../../jobs/queue.js';
import type { TaskContext } from '../../jobs/context.js';
import type { CompleteSignupPayload, SendPasswordResetPayload } from '../../jobs/payloads.js';
import { enqueueMail } from '../../mail/outbox.js';
import { createPersonalOrganization } from '../organizations/personal.js';
import { RESET_LINK_TTL_SECONDS, VERIFY_LINK_TTL_SECONDS } from './limits.js';
import * as store from './store.js';


/** The request's half of a sign-up: one row and one job, the same for any address. */
export async function queueSignup(
  db: Sql,
  input: { email: string; passwordHash: string; name: string | null; language: string; base: string },
  now: Date,
): Promise<void> {
  await db.begin(async (tx) => {
    const id = randomUUID();
    await store.insertPendingSignup(tx, { id, ...input }, now);
    await enqueue(tx, 'complete_signup', { id } satisfies CompleteSignupPayload);
  });
}

/** The request's half of forgot-password: one job, the same for any address. */
export async function queuePasswordReset(db: Db, payload: SendPasswordResetPayload): Promise<void> {
  await enqueue(db, 'send_password_reset', payload);
}

/**
 * Makes the account of a pending sign-up, or tells the owner of an address that has one; the row goes
 * in the same transaction, so a run repeated after a commit finds nothing left to do.
 */
export async function completeSignup(payload: CompleteSignupPayload, ctx: TaskContext): Promise<void> {
  const now = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    const pending = await store.takePendingSignup(tx, payload.id);
    if (!pending) return;
    const created = await store.createUser(
      tx,
      {
        email: pending.email,
        passwordHash: pending.password_hash,
        name: pending.name ?? pending.email.split('@')[0]!,
        language: pending.language,
      },
      now,
    );
    if (!created) {
      // The account exists: nothing on it changes; its owner hears of the attempt.
      const owner = await store.findUserByEmail(tx, pending.email);
      if (owner?.email) {
        await enqueueMail(
          tx,
          {
            to: owner.email,
            kind: 'signup_existing_account',
            language: owner.language,
            data: { loginLink: `${pending.link_base}/auth/login`, resetLink: `${pending.link_base}/auth/forgot-password` },
          },
          now,
        );
      }
      return;
    }
    await createPersonalOrganization(tx, created, now);
    const token = newEmailToken();
    await store.createEmailToken(
      tx,
      {
        userId: created.id,
        purpose: 'verify_email',
        digest: digestEmailToken(token),
        expiresAt: new Date(now.getTime() + VERIFY_LINK_TTL_SECONDS * 1000),
      },
      now,
    );
    const link = `${pending.link_base}/auth/verify-email?token=${encodeURIComponent(token)}`;
    await enqueueMail(tx, { to: created.email!, kind: 'verify_email', language: created.language, data: { link } }, now);
  });
}

export async function sendPasswordReset(payload: SendPasswordResetPayload, ctx: TaskContext): Promise<void> {
  const now = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    const user = await store.findUserByEmail(tx, payload.email);
    if (user) await mailResetLink(tx, user, payload.base, now);
  });
}

/** A new reset link (the earlier ones spent: one live link per account) and its mail. */
export async function mailResetLink(
  tx: Db,
  user: { id: string; email: string | null; language: string },
  base: string,
  now: Date,
): Promise<void> {
  if (!user.email) return;
  const token = newEmailToken();
  await store.expireEmailTokens(tx, user.id, 'password_reset', now);
  await store.createEmailToken(
    tx,
    {
      userId: user.id,
      purpose: 'password_reset',
      digest: digestEmailToken(token),
      expiresAt: new Date(now.getTime() + RESET_LINK_TTL_SECONDS * 1000),
    },
    now,
  );
  const link = `${base}/auth/reset-password?token=${encodeURIComponent(token)}`;
  await enqueueMail(tx, { to: user.email, kind: 'password_reset', language: user.language, data: { link } }, now);
}
