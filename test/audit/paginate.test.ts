// The SDK's paginator against the real audit list: every entry of a 250-entry log exactly once, most
// recent first, in as few requests as the spec's largest page allows, and with a page_size of its own.
import { randomUUID } from 'node:crypto';
import { createClient, createSessionClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let session: Awaited<ReturnType<typeof newAccount>>['session'];
let org: string;
const TOTAL = 250;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  ({ session } = await newAccount(app, smtp, 'paginate'));
  org = randomUUID();
  await app.sql`
    insert into organizations (id, name, slug, created_at, updated_at)
    values (${org}, 'Paged', ${`paged-${org.slice(0, 8)}`}, now(), now())`;
  await app.sql`
    insert into organization_members (organization_id, user_id, role, created_at)
    values (${org}, ${session.user.id}, 'admin', now())`;
  // Entry n was written n seconds after the first one; target.id carries n.
  await app.sql`
    insert into audit_entries (id, organization_id, actor_user_id, action, target_type, target_id, created_at)
    select gen_random_uuid(), ${org}, ${session.user.id}, case when n % 5 = 0 then 'project.created' else 'member.added' end,
           'member', n::text, timestamptz '2026-11-21T12:00:00Z' + n * interval '1 second'
    from generate_series(1, ${TOTAL}) n`;
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** A fetch that counts the audit pages asked for. */
function counting() {
  const pages: URLSearchParams[] = [];
  const fetch = (request: Request) => {
    const url = new URL(request.url);
    if (url.pathname.endsWith('/audit')) pages.push(url.searchParams);
    return globalThis.fetch(request);
  };
  return { pages, fetch };
}

describe('client.paginate on GET /organizations/{id}/audit', () => {
  it('yields every entry once, most recent first, 100 to a page by default', async () => {
    const { pages, fetch } = counting();
    const client = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0, fetch });
    const targets: number[] = [];
    for await (const e of client.paginate('organizationAuditList', { path: { id: org } }))
      targets.push(Number(e.target.id));
    expect(targets).toEqual(Array.from({ length: TOTAL }, (_, i) => TOTAL - i));
    expect(pages.map((q) => [q.get('page'), q.get('page_size')])).toEqual([
      ['1', '100'],
      ['2', '100'],
      ['3', '100'],
    ]);
  });

  it('passes page_size and the filters on the session client, and stops early when the loop does', async () => {
    const { pages, fetch } = counting();
    const client = createSessionClient({
      baseUrl: app.baseUrl,
      retries: 0,
      fetch,
      session: { token: session.token, refreshToken: session.refresh_token, sessionId: session.session_id },
    });
    const actions = new Set<string>();
    let count = 0;
    for await (const e of client.paginate('organizationAuditList', {
      path: { id: org },
      query: { action: 'project.created', page_size: 7 },
    })) {
      actions.add(e.action);
      count += 1;
    }
    expect([...actions]).toEqual(['project.created']);
    expect(count).toBe(TOTAL / 5);
    expect(pages).toHaveLength(Math.ceil(TOTAL / 5 / 7));

    pages.length = 0;
    let taken = 0;
    for await (const _ of client.paginate('organizationAuditList', {
      path: { id: org },
      query: { page_size: 10 },
    })) {
      if ((taken += 1) === 15) break;
    }
    expect(pages.map((q) => q.get('page'))).toEqual(['1', '2']);
  });
});
