// Signed-in callers for the organization and member tests: an SDK client that remembers the
// X-Request-Id of its last answer (to find the audit entry a write recorded), raw requests for
// byte-level comparisons, and read-backs of the audit log.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import type { TestApp } from './app.js';
import { newAccount } from './auth.js';
import type { TestSmtp } from './smtp.js';

export interface Caller {
  api: SvcClient;
  userId: string;
  email: string;
  token: string;
  personalOrganizationId: string;
  /** The X-Request-Id of the last answer this caller's client received. */
  lastRequestId(): string;
}

export async function signedIn(app: TestApp, smtp: TestSmtp, tag: string): Promise<Caller> {
  const { session, email } = await newAccount(app, smtp, tag);
  let last = '';
  const api = createClient({
    baseUrl: app.baseUrl,
    token: session.token,
    retries: 0,
    fetch: async (request) => {
      const response = await fetch(request);
      last = response.headers.get('x-request-id') ?? '';
      return response;
    },
  });
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${session.user.id}`;
  return {
    api,
    userId: session.user.id,
    email,
    token: session.token,
    personalOrganizationId: personal!.id,
    lastRequestId: () => last,
  };
}

export interface RawAnswer {
  status: number;
  contentType: string | null;
  text: string;
}

/** One request through plain fetch, with a fixed X-Request-Id so two answers can compare byte for byte. */
export async function raw(
  app: TestApp,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  requestId = 'compare-me',
): Promise<RawAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'x-request-id': requestId };
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${app.baseUrl}/api/v2${path}`, { method, headers, body: payload });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

export interface AuditRow {
  action: string;
  actor_user_id: string | null;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
}

export async function auditEntries(app: TestApp, organizationId: string): Promise<AuditRow[]> {
  return app.sql<AuditRow[]>`
    select action, actor_user_id, target_type, target_id, request_id from audit_entries
    where organization_id = ${organizationId} order by created_at, seq`;
}

/** The one audit entry recorded with this request id (fails when there is not exactly one). */
export async function auditOf(app: TestApp, requestId: string): Promise<AuditRow & { organization_id: string }> {
  const rows = await app.sql<(AuditRow & { organization_id: string })[]>`
    select organization_id, action, actor_user_id, target_type, target_id, request_id from audit_entries
    where request_id = ${requestId}`;
  if (rows.length !== 1) throw new Error(`expected one audit entry for request ${requestId}, found ${rows.length}`);
  return rows[0]!;
}

export async function auditCount(app: TestApp, organizationId: string): Promise<number> {
  const [r] = await app.sql<{ n: number }[]>`select count(*)::int as n from audit_entries where organization_id = ${organizationId}`;
  return r!.n;
}
