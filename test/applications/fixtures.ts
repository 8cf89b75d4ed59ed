// What the application, delegation and acting-as tests share: signed-in people (staff made with SQL
// and elevated with a PIN), registered applications with their own clients, and read-backs.
import { randomUUID } from 'node:crypto';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import type { Role } from '../../server/src/authz/roles.js';
import type { TestApp } from '../support/app.js';
import { newAccount, type Session } from '../support/auth.js';
import type { TestSmtp } from '../support/smtp.js';

export type Capability = components['schemas']['CapabilityName'];

export interface Person {
  id: string;
  /** The person's full (un-elevated) session. */
  api: SvcClient;
  token: string;
  session: Session;
}

export interface Staff extends Person {
  /** The same session, elevated with a PIN. */
  elevated: SvcClient;
}

export interface Application {
  id: string;
  token: string;
  /** A client authenticated as the application itself. */
  api: SvcClient;
}

export const clientOf = (app: TestApp, token?: string): SvcClient =>
  createClient({ baseUrl: app.baseUrl, retries: 0, ...(token ? { token } : {}) });

export async function person(app: TestApp, smtp: TestSmtp, tag: string): Promise<Person> {
  const { session } = await newAccount(app, smtp, tag);
  return { id: session.user.id, api: clientOf(app, session.token), token: session.token, session };
}

/** A user holding `permissions` (set by SQL, as the operator command does) with an elevated session. */
export async function staff(
  app: TestApp,
  smtp: TestSmtp,
  tag: string,
  permissions: string[],
): Promise<Staff> {
  const p = await person(app, smtp, tag);
  await app.sql`update users set system_permissions = ${permissions}::text[] where id = ${p.id}`;
  const { token } = await p.api.sudoSetup({ body: { pin: '246813' } });
  return { ...p, elevated: clientOf(app, token) };
}

/** Registers an application through the admin route, as an elevated manage_applications holder. */
export async function registerApplication(
  app: TestApp,
  registrar: Staff,
  capabilities: Capability[] = [],
  name = `App ${randomUUID().slice(0, 8)}`,
): Promise<Application> {
  const { application, token } = await registrar.elevated.adminApplicationCreate({
    body: { name, capabilities },
  });
  return { id: application.id, token, api: clientOf(app, token) };
}

/** A restricted personal API token of `p`'s, minted through the API, and a client using it. */
export async function personalToken(
  app: TestApp,
  p: Person,
  capabilities: Capability[] = ['me.read'],
): Promise<{ id: string; api: SvcClient }> {
  const { secret, token } = await p.api.meApiTokenCreate({
    body: {
      name: 'a token',
      authorization: { grants: capabilities.map((capability) => ({ capability, scope: { kind: 'all' } })) },
    },
  });
  return { id: token.id, api: clientOf(app, secret) };
}

/** A team organization with these members, made with SQL (organizations are tested elsewhere). */
export async function teamOrganization(
  app: TestApp,
  members: [userId: string, role: Role][],
): Promise<string> {
  const id = randomUUID();
  const now = app.clock.now();
  await app.sql`
    insert into organizations (id, name, slug, created_at, updated_at)
    values (${id}, 'Team', ${`team-${id.slice(0, 8)}`}, ${now}, ${now})`;
  for (const [userId, role] of members) {
    await app.sql`
      insert into organization_members (organization_id, user_id, role, created_at)
      values (${id}, ${userId}, ${role}, ${now})`;
  }
  return id;
}

export interface DelegationRow {
  id: string;
  application_id: string;
  capabilities: string[];
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Every delegation the user has, as stored. */
export const delegationsOf = (app: TestApp, userId: string) =>
  app.sql<DelegationRow[]>`
    select id, application_id, capabilities, created_at, updated_at, last_used_at, revoked_at
    from application_delegations where user_id = ${userId} order by created_at, id`;

export const countOf = async (app: TestApp, table: string): Promise<number> => {
  const [row] = await app.sql<{ n: number }[]>`select count(*)::int as n from ${app.sql(table)}`;
  return row!.n;
};
