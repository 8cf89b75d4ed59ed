// What the project tests share: signed-in callers that remember each answer's X-Request-Id, and
// organizations, memberships and subscriptions made with SQL (their APIs are written elsewhere, or
// not yet: subscriptions arrive with document 2).
import { randomUUID } from 'node:crypto';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import type { Role } from '../../server/src/authz/roles.js';
import type { TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import type { TestSmtp } from '../support/smtp.js';

// The embedded catalog's VPS product (migration 0013): a subscription references a real product.
const VPS_SMALL = '5c0a7a10-0000-4000-8000-000000000001';

export type Project = components['schemas']['Project'];
export type CreateBody = components['schemas']['ProjectCreateRequest'];

export interface Caller {
  api: SvcClient;
  userId: string;
  token: string;
  /** The X-Request-Id of the last answer this caller received. */
  lastRequestId(): string | null;
  /** A raw request with this caller's token, for byte-level comparisons. */
  raw(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
}

export async function signedIn(app: TestApp, smtp: TestSmtp, tag: string): Promise<Caller> {
  const { session } = await newAccount(app, smtp, tag);
  let last: string | null = null;
  const api = createClient({
    baseUrl: app.baseUrl,
    token: session.token,
    retries: 0,
    fetch: async (request) => {
      const res = await fetch(request);
      last = res.headers.get('x-request-id');
      return res;
    },
  });
  return {
    api,
    userId: session.user.id,
    token: session.token,
    lastRequestId: () => last,
    raw: (method, path, init = {}) =>
      fetch(`${app.baseUrl}/api/v2${path}`, {
        method,
        headers: {
          authorization: `Bearer ${session.token}`,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }),
  };
}

/** A team (not personal) organization with the given members, made with SQL. */
export async function teamOrganization(
  app: TestApp,
  members: [userId: string, role: Role][],
  name = 'Team',
): Promise<string> {
  const id = randomUUID();
  const now = app.clock.now();
  await app.sql`
    insert into organizations (id, name, slug, created_at, updated_at)
    values (${id}, ${name}, ${`team-${id.slice(0, 8)}`}, ${now}, ${now})`;
  for (const [userId, role] of members) {
    await app.sql`
      insert into organization_members (organization_id, user_id, role, created_at)
      values (${id}, ${userId}, ${role}, ${now})`;
  }
  return id;
}

export async function personalOrganization(app: TestApp, userId: string): Promise<string> {
  const [row] = await app.sql<
    { id: string }[]
  >`select id from organizations where personal_owner_id = ${userId}`;
  return row!.id;
}

export interface SubscriptionInput {
  status?: 'active' | 'suspended' | 'ended';
  price?: string;
  currency?: string;
  window?: [Date, Date] | null;
  deleted?: boolean;
}

export async function insertSubscription(
  app: TestApp,
  projectId: string,
  s: SubscriptionInput = {},
): Promise<string> {
  const id = randomUUID();
  const now = app.clock.now();
  await app.sql`
    insert into subscriptions (id, project_id, product_id, status, price, currency, window_start, window_end,
                               created_at, updated_at, deleted_at)
    values (${id}, ${projectId}, ${VPS_SMALL}, ${s.status ?? 'active'}, ${s.price ?? '5.00'}, ${s.currency ?? 'EUR'},
            ${s.window?.[0] ?? null}, ${s.window?.[1] ?? null}, ${now}, ${now}, ${s.deleted ? now : null})`;
  return id;
}

/** The project's row as stored, to show a refusal changed nothing. */
export async function projectRow(app: TestApp, id: string) {
  const [row] = await app.sql`
    select id, organization_id, name, slug, description, managed, created_at, updated_at from projects where id = ${id}`;
  return row;
}

export async function auditOf(app: TestApp, projectId: string) {
  return app.sql<
    {
      organization_id: string;
      action: string;
      actor_user_id: string | null;
      target_type: string;
      target_id: string | null;
      project_id: string | null;
      request_id: string | null;
      created_at: Date;
    }[]
  >`
    select organization_id, action, actor_user_id, target_type, target_id, project_id, request_id, created_at
    from audit_entries where target_type = 'project' and target_id = ${projectId}
    order by created_at, seq`;
}
