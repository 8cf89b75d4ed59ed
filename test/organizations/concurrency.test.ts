// Slugs are decided by the unique index, so concurrent writes of one slug make one organization; and
// the API is stateless, so a second process sees what the first made (ARCHITECTURE.md).
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startSecondProcess, type SecondProcess } from '../support/second-process.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let second: SecondProcess;
let callers: Caller[];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  // The test clock is frozen; the second process runs on real time, so set ours to now.
  app.clock.followRealTime();
  second = await startSecondProcess(app, { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' });
  callers = [];
  for (let i = 0; i < 4; i += 1) callers.push(await signIn(app, smtp, `race${i}`));
});
afterAll(async () => {
  await second?.stop();
  await app.close();
  await smtp.close();
});

let n = 0;
const slug = () => `race-${Date.now().toString(36)}-${(n += 1)}`;
const withSlug = async (s: string) => app.sql<{ id: string }[]>`select id from organizations where slug = ${s}`;

describe('concurrent writes of one slug', () => {
  it.each([1, 2, 3])('8 parallel creates make exactly one organization; the others are 409 slug-taken (run %i)', async () => {
    const s = slug();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => outcome(callers[i % callers.length]!.api.organizationCreate({ body: { name: `Racer ${i}`, slug: s } }))),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual(Array.from({ length: 7 }, () => [409, 'slug-taken']));
    const rows = await withSlug(s);
    expect(rows).toHaveLength(1);
    const members = await app.sql`select 1 from organization_members where organization_id = ${rows[0]!.id}`;
    expect(members).toHaveLength(1);
    expect(await app.sql`select 1 from audit_entries where organization_id = ${rows[0]!.id}`).toHaveLength(1);
  });

  it('two parallel renames to one slug: one wins, the other is 409 and keeps its own', async () => {
    const [a, b] = callers as [Caller, Caller];
    const one = await a.api.organizationCreate({ body: { name: 'One', slug: slug() } });
    const two = await b.api.organizationCreate({ body: { name: 'Two', slug: slug() } });
    const s = slug();
    const results = await Promise.all([
      outcome(a.api.organizationUpdate({ path: { id: one.id }, body: { name: null, slug: s } })),
      outcome(b.api.organizationUpdate({ path: { id: two.id }, body: { name: null, slug: s } })),
    ]);
    expect([...results].sort()).toEqual([[409, 'slug-taken'], 'ok'].sort());
    const slugs = await app.sql<{ slug: string }[]>`select slug from organizations where id in (${one.id}, ${two.id}) order by slug`;
    expect(slugs.map((r) => r.slug)).toContain(s);
    expect(slugs.map((r) => r.slug)).toContain(results[0] === 'ok' ? two.slug : one.slug);
  });
});

describe('a second API process', () => {
  it('sees an organization created through the first, and the first sees its changes', async () => {
    const [me] = callers as [Caller];
    const org = await me.api.organizationCreate({ body: { name: 'Shared', slug: slug() } });
    const other = createClient({ baseUrl: second.baseUrl, token: me.token, retries: 0 });
    expect(await other.organizationGet({ path: { id: org.id } })).toEqual(org);
    expect((await other.organizationList()).map((o) => o.id)).toContain(org.id);
    const renamed = await other.organizationUpdate({ path: { id: org.id }, body: { name: 'Shared Too', slug: null } });
    expect(await me.api.organizationGetBySlug({ path: { slug: org.slug } })).toEqual(renamed);
  });
});
