// What the personal API token tests share: one app per file, people with a recording session client
// (the SDK hides a success's status, and 201 and 204 are part of what is tested), minting, clients
// that present a token, and read-backs of the api_tokens table.
import { createHmac } from 'node:crypto';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll } from 'vitest';
import type { SystemPermission } from '../../server/src/authz/system-permissions.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

export type GrantRequest = components['schemas']['GrantRequest'];
export type CreateBody = components['schemas']['ApiTokenCreateRequest'];
export type Created = components['schemas']['ApiTokenCreated'];

export interface Harness {
  readonly app: TestApp;
  readonly smtp: TestSmtp;
}

/** Starts the app and its mail server for the calling file; read the fields inside tests only. */
export function useApp(): Harness {
  const h = {} as { app: TestApp; smtp: TestSmtp };
  beforeAll(async () => {
    h.smtp = await startTestSmtp();
    h.app = await startTestApp({ env: { SMTP_URL: h.smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  });
  afterAll(async () => {
    await h.app?.close();
    await h.smtp?.close();
  });
  return h;
}

/** An SDK client presenting `token` that remembers the HTTP status of its last answer. */
export function recordingClient(app: TestApp, token?: string): { api: SvcClient; lastStatus(): number } {
  let status = 0;
  const api = createClient({
    baseUrl: app.baseUrl,
    retries: 0,
    ...(token ? { token } : {}),
    fetch: async (request) => {
      const response = await fetch(request);
      status = response.status;
      return response;
    },
  });
  return { api, lastStatus: () => status };
}

/** A client presenting a personal API token (or any other bearer credential). */
export const bearer = (app: TestApp, token: string): SvcClient =>
  createClient({ baseUrl: app.baseUrl, token, retries: 0 });

export interface Person {
  id: string;
  /** The person's full, un-elevated session. */
  api: SvcClient;
  sessionToken: string;
  /** The HTTP status of the last answer `api` received. */
  lastStatus(): number;
}

/** A new signed-up, signed-in account; staff when given system permissions (set in SQL, as an operator would). */
export async function person(
  h: Harness,
  tag: string,
  systemPermissions: SystemPermission[] = [],
): Promise<Person> {
  const { session } = await newAccount(h.app, h.smtp, tag);
  if (systemPermissions.length > 0) {
    await h.app
      .sql`update users set system_permissions = ${systemPermissions}::text[] where id = ${session.user.id}`;
  }
  const { api, lastStatus } = recordingClient(h.app, session.token);
  return { id: session.user.id, api, sessionToken: session.token, lastStatus };
}

/** The person's session elevated with a PIN (the first elevation sets it up). */
export async function elevated(h: Harness, p: Person): Promise<SvcClient> {
  const { token } = await p.api.sudoSetup({ body: { pin: '246813' } });
  return bearer(h.app, token);
}

export const everywhere = (capability: string): GrantRequest => ({ capability, scope: { kind: 'all' } });
export const inOrganization = (capability: string, id: string): GrantRequest => ({
  capability,
  scope: { kind: 'organization', id },
});
export const inProject = (capability: string, id: string): GrantRequest => ({
  capability,
  scope: { kind: 'project', id },
});

/** Mints a token through `api` (a full session) with these grants. */
export function mint(
  api: SvcClient,
  grants: GrantRequest[],
  extra: Partial<CreateBody> = {},
): Promise<Created> {
  return api.meApiTokenCreate({ body: { name: 'test token', authorization: { grants }, ...extra } });
}

export interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  secret_digest: Buffer;
  grants: { grants: unknown[] } | null;
  admin_authorized: boolean;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function tokenRow(app: TestApp, id: string): Promise<TokenRow | undefined> {
  const [row] = await app.sql<TokenRow[]>`select * from api_tokens where id = ${id}`;
  return row;
}

/** Every token row of the user, revoked or not: what a refused mint must leave alone. */
export async function tokenCount(app: TestApp, userId: string): Promise<number> {
  const [r] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from api_tokens where user_id = ${userId}`;
  return r!.n;
}

/** The server's API token pepper; it exists once any token was minted. */
export async function pepper(app: TestApp): Promise<Buffer> {
  const [row] = await app.sql<
    { value: Buffer }[]
  >`select value from server_secrets where name = 'api-token-pepper'`;
  if (!row) throw new Error('no api-token-pepper yet: mint a token first');
  return row.value;
}

/** The stored form of a credential, computed here rather than by the server's code. */
export const digestOf = (key: Buffer, credential: string): Buffer =>
  createHmac('sha256', key).update(credential, 'utf8').digest();

/** What a refusal tells the caller, for comparing two refusals as a client would see them. */
export async function answerOf(p: Promise<unknown>) {
  const e = await refusal(p);
  return { status: e.status, code: e.code, detail: e.detail, errors: e.errors };
}
