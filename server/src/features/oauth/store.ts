// All SQL of OAuth sign-in: flows, completion keys, linked identities and the accounts they create.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface FlowRow {
  id: string;
  provider_id: string;
  purpose: 'sign_in' | 'link';
  user_id: string | null;
  session_id: string | null;
  redirect_to: string;
  secrets_sealed: string;
  referral_code: string | null;
  reseller_id: string | null;
  browser_digest: Buffer | null;
  expires_at: Date;
  used_at: Date | null;
}

export interface LinkRow {
  id: string;
  user_id: string;
  provider_id: string;
  issuer: string | null;
  provider_user_id: string;
  email: string | null;
  created_at: Date;
  last_used_at: Date | null;
  picture_url: string | null;
  picture_asset_id: string | null;
}

const FLOW_COLUMNS =
  'id, provider_id, purpose, user_id, session_id, redirect_to, secrets_sealed, referral_code, reseller_id, browser_digest, expires_at, used_at';
const LINK_COLUMNS =
  'id, user_id, provider_id, issuer, provider_user_id, email, created_at, last_used_at, picture_url, picture_asset_id';

export async function isResellerHost(db: Db, host: string): Promise<boolean> {
  const rows = await db`select 1 from resellers where hostname = ${host} and deleted_at is null`;
  return rows.length > 0;
}

/** A reseller that exists (paused or not); null for none. */
export async function findReseller(
  db: Db,
  id: string,
): Promise<{ id: string; enabled: boolean } | undefined> {
  const [row] = await db<{ id: string; enabled: boolean }[]>`
    select id, enabled from resellers where id = ${id} and deleted_at is null`;
  return row;
}

// --- flows ------------------------------------------------------------------------------------------

export async function createFlow(
  db: Db,
  input: {
    stateDigest: Buffer;
    providerId: string;
    purpose: 'sign_in' | 'link';
    userId: string | null;
    sessionId: string | null;
    redirectTo: string;
    secretsSealed: string;
    referralCode: string | null;
    resellerId: string | null;
    browserDigest: Buffer | null;
    expiresAt: Date;
  },
  now: Date,
): Promise<void> {
  await db`
    insert into oauth_flows (id, state_digest, provider_id, purpose, user_id, session_id, redirect_to, secrets_sealed,
                             referral_code, reseller_id, browser_digest, created_at, expires_at)
    values (${randomUUID()}, ${input.stateDigest}, ${input.providerId}, ${input.purpose}, ${input.userId},
            ${input.sessionId}, ${input.redirectTo}, ${input.secretsSealed}, ${input.referralCode}, ${input.resellerId},
            ${input.browserDigest}, ${now}, ${input.expiresAt})`;
}

/**
 * The flow of this state and provider (a state of another provider is unknown here), spent by this call: `live` when it was unused and unexpired (and is now
 * used), `dead` when it exists but was spent or has expired (it stays so), undefined when unknown.
 * One statement decides, so two callbacks racing with one state cannot both have it live.
 */
export async function spendFlow(
  db: Db,
  stateDigest: Buffer,
  providerId: string,
  now: Date,
): Promise<{ flow: FlowRow; live: boolean } | undefined> {
  const [spent] = await db<FlowRow[]>`
    update oauth_flows set used_at = ${now}
    where state_digest = ${stateDigest} and provider_id = ${providerId} and used_at is null and expires_at > ${now}
    returning ${db.unsafe(FLOW_COLUMNS)}`;
  if (spent) return { flow: spent, live: true };
  const [dead] = await db<FlowRow[]>`
    select ${db.unsafe(FLOW_COLUMNS)} from oauth_flows where state_digest = ${stateDigest} and provider_id = ${providerId}`;
  return dead ? { flow: dead, live: false } : undefined;
}

// --- completion keys --------------------------------------------------------------------------------

export async function createCompletion(
  db: Db,
  input: { keyDigest: Buffer; userId: string; providerId: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await db`
    insert into oauth_completions (id, key_digest, user_id, provider_id, created_at, expires_at)
    values (${randomUUID()}, ${input.keyDigest}, ${input.userId}, ${input.providerId}, ${now}, ${input.expiresAt})`;
}

/** Spends a live key; undefined for an unknown, expired or spent one alike. */
export async function spendCompletion(
  db: Db,
  keyDigest: Buffer,
  now: Date,
): Promise<{ user_id: string } | undefined> {
  const [row] = await db<{ user_id: string }[]>`
    update oauth_completions set used_at = ${now}
    where key_digest = ${keyDigest} and used_at is null and expires_at > ${now}
    returning user_id`;
  return row;
}

// --- linked identities ------------------------------------------------------------------------------

/**
 * The link of this identity (issuer + subject). Not locked: writers lock the account (users row)
 * first and the link after, in that order everywhere, so a sign-in and an unlink cannot deadlock.
 */
export async function findIdentity(db: Db, issuer: string, subject: string): Promise<LinkRow | undefined> {
  const [row] = await db<LinkRow[]>`
    select ${db.unsafe(LINK_COLUMNS)} from oauth_accounts where issuer = ${issuer} and provider_user_id = ${subject}`;
  return row;
}

export async function findUserLink(db: Db, userId: string, providerId: string): Promise<LinkRow | undefined> {
  const [row] = await db<LinkRow[]>`
    select ${db.unsafe(LINK_COLUMNS)} from oauth_accounts where user_id = ${userId} and provider_id = ${providerId}`;
  return row;
}

export async function listUserLinks(db: Db, userId: string): Promise<LinkRow[]> {
  return db<LinkRow[]>`
    select ${db.unsafe(LINK_COLUMNS)} from oauth_accounts where user_id = ${userId} order by created_at, id`;
}

/**
 * Links an identity; undefined when it could not be (the identity was linked, or the user holds
 * another identity of this provider, meanwhile).
 */
export async function insertLink(
  db: Db,
  input: { userId: string; providerId: string; issuer: string; subject: string; email: string | null },
  now: Date,
): Promise<LinkRow | undefined> {
  const [row] = await db<LinkRow[]>`
    insert into oauth_accounts (id, user_id, provider_id, issuer, provider_user_id, email, created_at, last_used_at)
    values (${randomUUID()}, ${input.userId}, ${input.providerId}, ${input.issuer}, ${input.subject}, ${input.email},
            ${now}, ${now})
    on conflict do nothing
    returning ${db.unsafe(LINK_COLUMNS)}`;
  return row;
}

/** A sign-in or a link through a known identity: the email it now reports, and when. False when it is gone. */
export async function touchLink(
  db: Db,
  id: string,
  userId: string,
  email: string | null,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    update oauth_accounts set email = ${email}, last_used_at = ${now} where id = ${id} and user_id = ${userId} returning id`;
  return rows.length === 1;
}

export async function setLinkPicture(
  db: Db,
  id: string,
  url: string | null,
  assetId: string | null,
): Promise<void> {
  await db`update oauth_accounts set picture_url = ${url}, picture_asset_id = ${assetId} where id = ${id}`;
}

export async function deleteLink(db: Db, id: string): Promise<void> {
  await db`delete from oauth_accounts where id = ${id}`;
}

// --- accounts ---------------------------------------------------------------------------------------

export interface AccountRow {
  id: string;
  email: string | null;
  password_hash: string | null;
  avatar_source: string | null;
  deleted_at: Date | null;
}

/** The account, locked: unlinking counts its ways to sign in under this lock. */
export async function lockAccount(db: Db, userId: string): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow[]>`
    select id, email, password_hash, avatar_source, deleted_at from users where id = ${userId} for update`;
  return row;
}

export async function countLinks(db: Db, userId: string): Promise<number> {
  const [row] = await db<
    { n: number }[]
  >`select count(*)::int as n from oauth_accounts where user_id = ${userId}`;
  return row!.n;
}

/** Whether any account (deleted ones too: an address is never reused silently) holds this address. */
export async function emailTaken(db: Db, email: string): Promise<boolean> {
  const rows = await db`select 1 from users where email = ${email}`;
  return rows.length > 0;
}

export async function recordAttribution(
  db: Db,
  userId: string,
  referralCode: string | null,
  resellerId: string | null,
): Promise<void> {
  await db`update users set referral_code = ${referralCode}, reseller_id = ${resellerId} where id = ${userId}`;
}

/** Whether the session that started a link flow may still be used. */
export async function sessionIsLive(db: Db, sessionId: string, userId: string, now: Date): Promise<boolean> {
  const rows = await db`
    select 1 from sessions
    where id = ${sessionId} and user_id = ${userId} and revoked_at is null
      and absolute_expires_at > ${now} and idle_expires_at > ${now}`;
  return rows.length > 0;
}
