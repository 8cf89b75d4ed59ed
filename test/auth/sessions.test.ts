// Refresh rotation with reuse detection and the two-tab grace, session lifetimes, logout and deletion.
import { createClient, SvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn, newAccount } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let anon: ReturnType<typeof createClient>;
const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', REFRESH_IDLE_TTL_SECONDS: String(7 * 24 * 3600) } });
  anon = createClient({ baseUrl: app.baseUrl, retries: 0 });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

async function status(p: Promise<unknown>): Promise<[number, string] | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof SvcApiError) return [e.status, e.code];
    throw e;
  }
}

const withClock = async (ms: number, fn: () => Promise<void>) => {
  app.clock.advance(ms);
  try {
    await fn();
  } finally {
    app.clock.advance(-ms);
  }
};

describe('refresh', () => {
  it('rotates on every use, keeping the session id', async () => {
    const { session } = await newAccount(app, smtp, 'rotate');
    const next = await anon.authRefresh({ body: { refresh_token: session.refresh_token } });
    expect(next.session_id).toBe(session.session_id);
    expect(next.refresh_token).not.toBe(session.refresh_token);
    expect(next.token).not.toBe(session.token);
    const after = await anon.authRefresh({ body: { refresh_token: next.refresh_token } });
    expect(after.session_id).toBe(session.session_id);
    expect(await status(createClient({ baseUrl: app.baseUrl, token: after.token, retries: 0 }).authSessionGet())).toBe('ok');
  });

  it('revokes the whole family when a spent token is presented after the grace window', async () => {
    const { session } = await newAccount(app, smtp, 'reuse');
    const next = await anon.authRefresh({ body: { refresh_token: session.refresh_token } });
    await withClock(11 * SECOND, async () => {
      expect(await status(anon.authRefresh({ body: { refresh_token: session.refresh_token } }))).toEqual([401, 'unauthenticated']);
      // Every pair of the family is dead: the live successor and its access token too.
      expect(await status(anon.authRefresh({ body: { refresh_token: next.refresh_token } }))).toEqual([401, 'unauthenticated']);
      const me = createClient({ baseUrl: app.baseUrl, token: next.token, retries: 0 });
      expect(await status(me.authSessionGet())).toEqual([401, 'unauthenticated']);
    });
    const [row] = await app.sql<{ revoked_reason: string }[]>`select revoked_reason from sessions where id = ${session.session_id}`;
    expect(row!.revoked_reason).toBe('refresh_token_reuse');
  });

  it('lets two tabs refresh the same token at once: one rotation, one live successor, nobody logged out', async () => {
    const { session } = await newAccount(app, smtp, 'race');
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => anon.authRefresh({ body: { refresh_token: session.refresh_token } })),
    );
    expect(new Set(answers.map((a) => a.refresh_token)).size).toBe(1);
    expect(new Set(answers.map((a) => a.session_id))).toEqual(new Set([session.session_id]));
    const tokens = await app.sql<{ spent: boolean }[]>`
      select spent_at is not null as spent from refresh_tokens where session_id = ${session.session_id}`;
    expect(tokens.filter((t) => !t.spent)).toHaveLength(1);
    expect(tokens).toHaveLength(2);
    // A retry inside the grace window gets the same successor back.
    const retry = await anon.authRefresh({ body: { refresh_token: session.refresh_token } });
    expect(retry.refresh_token).toBe(answers[0]!.refresh_token);
    const onward = await anon.authRefresh({ body: { refresh_token: retry.refresh_token } });
    expect(onward.session_id).toBe(session.session_id);
  });

  it('refuses an unknown token without touching anything', async () => {
    const before = await app.sql`select id, revoked_at from sessions order by id`;
    expect(await status(anon.authRefresh({ body: { refresh_token: 'svc_rt_unknown' } }))).toEqual([401, 'unauthenticated']);
    expect(await app.sql`select id, revoked_at from sessions order by id`).toEqual(before);
  });

  it('expires after the idle lifetime, and after 30 days however often it is used', async () => {
    const { session } = await newAccount(app, smtp, 'idle');
    await withClock(7 * DAY + SECOND, async () => {
      expect(await status(anon.authRefresh({ body: { refresh_token: session.refresh_token } }))).toEqual([401, 'unauthenticated']);
    });
    let current = session.refresh_token;
    let offset = 0;
    try {
      for (let day = 6; offset + day * DAY < 30 * DAY; ) {
        app.clock.advance(day * DAY);
        offset += day * DAY;
        current = (await anon.authRefresh({ body: { refresh_token: current } })).refresh_token;
      }
      app.clock.advance(30 * DAY - offset + SECOND);
      offset = 30 * DAY + SECOND;
      expect(await status(anon.authRefresh({ body: { refresh_token: current } }))).toEqual([401, 'unauthenticated']);
    } finally {
      app.clock.advance(-offset);
    }
  });
});

describe('access tokens', () => {
  it('are refused with 401 unauthenticated when missing, malformed, tampered or expired', async () => {
    const { session } = await newAccount(app, smtp, 'jwt');
    const call = (token?: string) => createClient({ baseUrl: app.baseUrl, token, retries: 0 }).authSessionGet();
    expect(await status(call())).toEqual([401, 'unauthenticated']);
    expect(await status(call('garbage'))).toEqual([401, 'unauthenticated']);
    const [h, p, s] = session.token.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: '00000000-0000-4000-8000-000000000000' })).toString('base64url')}.${s}`;
    expect(await status(call(tampered))).toEqual([401, 'unauthenticated']);
    await withClock(15 * 60 * SECOND + SECOND, async () => {
      expect(await status(call(session.token))).toEqual([401, 'unauthenticated']);
    });
    expect(await status(call(session.token))).toBe('ok');
  });
});

describe('logout and session deletion', () => {
  it('logout ends the family of the presented refresh token at once', async () => {
    const { session } = await newAccount(app, smtp, 'logout');
    const me = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    await me.authLogout({ body: { refresh_token: session.refresh_token } });
    expect(await status(me.authSessionGet())).toEqual([401, 'unauthenticated']);
    expect(await status(anon.authRefresh({ body: { refresh_token: session.refresh_token } }))).toEqual([401, 'unauthenticated']);
  });

  it("logout with someone else's refresh token changes nothing of theirs", async () => {
    const alice = await newAccount(app, smtp, 'alice');
    const bob = await newAccount(app, smtp, 'bob');
    const asAlice = createClient({ baseUrl: app.baseUrl, token: alice.session.token, retries: 0 });
    await asAlice.authLogout({ body: { refresh_token: bob.session.refresh_token } });
    expect(await status(createClient({ baseUrl: app.baseUrl, token: bob.session.token, retries: 0 }).authSessionGet())).toBe('ok');
  });

  it("deletes one's own session at once; another person's id is a silent 204 no-op", async () => {
    const alice = await newAccount(app, smtp, 'del-a');
    const other = await logIn(app, smtp, alice.email, alice.password);
    const bob = await newAccount(app, smtp, 'del-b');
    const asAlice = createClient({ baseUrl: app.baseUrl, token: alice.session.token, retries: 0 });

    const res = await fetch(`${app.baseUrl}/api/v2/me/sessions/${bob.session.session_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${alice.session.token}` },
    });
    expect(res.status).toBe(204);
    expect(await status(createClient({ baseUrl: app.baseUrl, token: bob.session.token, retries: 0 }).authSessionGet())).toBe('ok');

    await asAlice.meSessionDelete({ path: { session_id: other.session_id } });
    expect(await status(createClient({ baseUrl: app.baseUrl, token: other.token, retries: 0 }).authSessionGet())).toEqual([
      401,
      'unauthenticated',
    ]);
    expect((await asAlice.meSessionsList()).data.map((s) => s.id)).toEqual([alice.session.session_id]);
  });
});
