// What a verified provider identity does to our accounts (seed document 1, "OAuth"; DECISIONS.md §4).
// The identity is the issuer and the subject, never the email: a known identity signs in to its account
// whatever address it reports now; a new one with a verified address nobody holds creates an account;
// an address another account holds is `email_conflict`, never a silent link. A link flow attaches the
// identity to the user who started it.
import { recordPlatformEvent } from '../../audit/record.js';
import { digestToken, newSecret } from '../../auth/crypto/tokens.js';
import type { OAuthProviderConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { RequestContext } from '../../http/handler.js';
import { createUser } from '../auth/store.js';
import { checkName } from '../me/name-rules.js';
import { createPersonalOrganization } from '../organizations/personal.js';
import type { ProviderIdentity } from './provider-identity.js';
import type { Outcome } from './redirect.js';
import * as store from './store.js';

/** A completion key travels in a URL: short-lived, so a leaked history entry is soon worthless. */
const COMPLETION_TTL_SECONDS = 2 * 60;
const LANGUAGE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

export interface Resolved {
  outcome: Outcome;
  /** The link signed in through or made, whose picture to refresh; absent when nothing was. */
  link?: store.LinkRow;
  newAccount: boolean;
}

/** Thrown inside the transaction to undo what it wrote, and answered as `outcome`. */
class Refusal extends Error {
  constructor(readonly outcome: Outcome) {
    super('refused');
  }
}

const failed: Resolved = { outcome: { error: 'login_failed' }, newAccount: false };

export async function resolveIdentity(
  ctx: RequestContext,
  provider: OAuthProviderConfig,
  flow: store.FlowRow,
  identity: ProviderIdentity,
): Promise<Resolved> {
  try {
    return await ctx.sql.begin((tx) =>
      flow.purpose === 'link'
        ? linkTo(tx, ctx, provider, flow, identity)
        : signIn(tx, ctx, provider, flow, identity),
    );
  } catch (err) {
    if (err instanceof Refusal) return { outcome: err.outcome, newAccount: false };
    throw err;
  }
}

async function signIn(
  tx: Db,
  ctx: RequestContext,
  provider: OAuthProviderConfig,
  flow: store.FlowRow,
  identity: ProviderIdentity,
): Promise<Resolved> {
  const now = ctx.clock.now();
  const known = await store.findIdentity(tx, identity.issuer, identity.subject);
  if (known) {
    const account = await store.lockAccount(tx, known.user_id);
    if (!account || account.deleted_at) return failed;
    // Unlinked while the account's lock was awaited: the identity no longer signs in there.
    if (!(await store.touchLink(tx, known.id, known.user_id, identity.email, now))) return failed;
    return {
      outcome: { key: await completionKey(tx, ctx, known.user_id, provider.id) },
      link: known,
      newAccount: false,
    };
  }
  // A new identity makes a new account, which needs an address the provider verified.
  if (identity.email === null) return { outcome: { error: 'email_required' }, newAccount: false };
  if (await store.emailTaken(tx, identity.email))
    return { outcome: { error: 'email_conflict' }, newAccount: false };
  if (flow.reseller_id) {
    const reseller = await store.findReseller(tx, flow.reseller_id);
    if (!reseller) return failed;
    if (!reseller.enabled) return { outcome: { error: 'reseller_paused' }, newAccount: false };
  }
  // The password sign-up's own path: the account and its personal organization, in one transaction.
  const user = await createUser(
    tx,
    {
      email: identity.email,
      passwordHash: null,
      name: nameFor(identity),
      language: languageFor(identity),
      verified: true,
    },
    now,
  );
  if (!user) return { outcome: { error: 'email_conflict' }, newAccount: false };
  await createPersonalOrganization(tx, user, now);
  await store.recordAttribution(tx, user.id, flow.referral_code, flow.reseller_id);
  const link = await store.insertLink(
    tx,
    {
      userId: user.id,
      providerId: provider.id,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
    },
    now,
  );
  // Another callback linked this identity meanwhile: undo the account made here.
  if (!link) throw new Refusal({ error: 'login_failed' });
  await recordPlatformEvent(tx, ctx, {
    action: 'oauth_account.linked',
    target: { type: 'user', id: user.id },
    details: { provider_id: provider.id, account_created: true },
  });
  return { outcome: { key: await completionKey(tx, ctx, user.id, provider.id) }, link, newAccount: true };
}

async function linkTo(
  tx: Db,
  ctx: RequestContext,
  provider: OAuthProviderConfig,
  flow: store.FlowRow,
  identity: ProviderIdentity,
): Promise<Resolved> {
  const now = ctx.clock.now();
  const userId = flow.user_id!;
  // The flow is bound to the session that started it: signed out meanwhile, nothing is linked.
  if (!(await store.sessionIsLive(tx, flow.session_id!, userId, now))) return failed;
  const account = await store.lockAccount(tx, userId);
  if (!account || account.deleted_at) return failed;
  const known = await store.findIdentity(tx, identity.issuer, identity.subject);
  if (known) {
    // Held by another account: refused (DECISIONS.md §4), never moved.
    if (known.user_id !== userId) return failed;
    if (!(await store.touchLink(tx, known.id, userId, identity.email, now))) return failed;
    return { outcome: { linked: provider.id }, link: known, newAccount: false };
  }
  // One identity per provider per account: another one of this provider is unlinked first.
  if (await store.findUserLink(tx, userId, provider.id)) return failed;
  const link = await store.insertLink(
    tx,
    {
      userId,
      providerId: provider.id,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
    },
    now,
  );
  if (!link) return failed;
  await recordPlatformEvent(tx, ctx, {
    action: 'oauth_account.linked',
    target: { type: 'user', id: userId },
    details: { provider_id: provider.id, account_created: false },
  });
  return { outcome: { linked: provider.id }, link, newAccount: false };
}

/** A new single-use completion key for `userId`, stored as its digest. */
async function completionKey(
  tx: Db,
  ctx: RequestContext,
  userId: string,
  providerId: string,
): Promise<string> {
  const now = ctx.clock.now();
  const key = newSecret();
  await store.createCompletion(
    tx,
    {
      keyDigest: digestToken(key),
      userId,
      providerId,
      expiresAt: new Date(now.getTime() + COMPLETION_TTL_SECONDS * 1000),
    },
    now,
  );
  return key;
}

/** The provider's name for the person when it is a name we accept (me/name-rules.ts), else the address's local part. */
function nameFor(identity: ProviderIdentity): string {
  const checked = identity.name === null ? null : checkName(identity.name);
  return checked?.ok ? checked.name : identity.email!.split('@')[0]!.slice(0, 64);
}

function languageFor(identity: ProviderIdentity): string {
  const locale = identity.locale?.replace(/_/g, '-') ?? '';
  return locale.length <= 35 && LANGUAGE.test(locale) ? locale : 'en';
}
