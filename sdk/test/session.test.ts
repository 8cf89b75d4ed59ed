// The session client against the real app: sign-in over real SMTP, refresh after the access token
// expires (the app's clock is moved), a session revoked on the server, logout, and the README's
// recipe run as written. The client's own edge cases are in session-scripted.test.ts.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { revokeSession } from '../../server/src/features/auth/store.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { codeIn, logIn, newAccount, signUp, uniqueEmail } from '../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../test/support/smtp.js';
import {
  createClient,
  createSessionClient,
  isSvcApiError,
  type SessionClientOptions,
  type SessionEndReason,
  type SessionTokens,
} from '../src/index.js';

let app: TestApp;
let smtp: TestSmtp;
const MINUTE = 60_000;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** Moves the app's clock for the duration of `fn`, and back. */
async function withClock<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  app.clock.advance(ms);
  try {
    return await fn();
  } finally {
    app.clock.advance(-ms);
  }
}

const pairOf = (s: { token: string; refresh_token: string; session_id: string }): SessionTokens => ({
  token: s.token,
  refreshToken: s.refresh_token,
  sessionId: s.session_id,
});

/** A session client whose requests and callbacks are recorded. */
function recorded(session: SessionTokens | null, extra: Partial<SessionClientOptions> = {}) {
  const calls: { path: string; status: number }[] = [];
  const rotated: SessionTokens[] = [];
  const ended: SessionEndReason[] = [];
  const client = createSessionClient({
    baseUrl: app.baseUrl,
    session,
    retries: 0,
    fetch: async (request) => {
      const response = await fetch(request);
      calls.push({ path: new URL(request.url).pathname.replace(/^\/api\/v2/, ''), status: response.status });
      return response;
    },
    onTokens: (t) => void rotated.push(t),
    onSessionEnded: (reason) => void ended.push(reason),
    // The app's clock, which the tests move, decides when a token is due for refreshing.
    now: () => app.clock.now().getTime(),
    ...extra,
  });
  const count = (path: string, status?: number) =>
    calls.filter((c) => c.path === path && (status === undefined || c.status === status)).length;
  return { client, calls, count, rotated, ended };
}

async function refreshTokenRows(sessionId: string) {
  return app.sql<{ spent: boolean }[]>`
    select spent_at is not null as spent from refresh_tokens where session_id = ${sessionId} order by created_at`;
}

describe('session client against the app', () => {
  test('signs in with the emailed code and uses the session', async () => {
    const email = uniqueEmail('sdk-login');
    const password = 'correct horse battery staple';
    await signUp(app, smtp, email, password);
    const { client, rotated } = recorded(null);
    const seen = smtp.messages.length;
    const challenge = await client.login(email, password);
    expect(challenge.status).toBe('code_sent');
    const mail = await smtp.waitFor(
      (m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && /\d{6}/.test(m.text),
    );
    const session = await client.verifyCode(challenge.challenge_id, codeIn(mail));
    expect(session.user.email).toBe(email);
    expect(rotated).toEqual([pairOf(session)]);
    expect(client.tokens()).toEqual(pairOf(session));
    const current = await client.authSessionGet();
    expect(current.session_id).toBe(session.session_id);
  });

  test('ten parallel requests after the access token expired: all succeed after exactly one refresh', async () => {
    const { session } = await newAccount(app, smtp, 'sdk-expiry');
    // Only the 401 path here; refreshing ahead of expiry has its own test below.
    const { client, count, rotated, ended } = recorded(pairOf(session), { refreshAheadMs: false });
    await client.authSessionGet();

    await withClock(16 * MINUTE, async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, () => client.authSessionGet()));
      for (const answer of answers) expect(answer.session_id).toBe(session.session_id);
      expect(count('/auth/refresh')).toBe(1);
      expect(count('/auth/session', 401)).toBe(10);
      expect(count('/auth/session', 200)).toBe(11);
    });

    expect(rotated).toHaveLength(1);
    expect(rotated[0]!.sessionId).toBe(session.session_id);
    expect(rotated[0]!.refreshToken).not.toBe(session.refresh_token);
    expect(client.tokens()).toEqual(rotated[0]);
    expect(ended).toEqual([]);
    // On the server: the first refresh token spent once, its successor live.
    expect(await refreshTokenRows(session.session_id)).toEqual([{ spent: true }, { spent: false }]);
  });

  test('refreshes ahead of expiry, so no request fails first', async () => {
    const { session } = await newAccount(app, smtp, 'sdk-ahead');
    const { client, count, rotated } = recorded(pairOf(session));
    await withClock(14.5 * MINUTE, async () => {
      await Promise.all(Array.from({ length: 5 }, () => client.authSessionGet()));
      expect(count('/auth/refresh')).toBe(1);
      expect(count('/auth/session', 401)).toBe(0);
      expect(count('/auth/session', 200)).toBe(5);
      expect(rotated).toHaveLength(1);
    });
  });

  test('a session revoked on the server fails with 401 and ends, without a loop', async () => {
    const { email, password, session } = await newAccount(app, smtp, 'sdk-revoked');
    const other = await logIn(app, smtp, email, password);
    const { client, count, rotated, ended } = recorded(pairOf(session));
    await client.authSessionGet();

    // Signed out from the other session.
    const elsewhere = createClient({ baseUrl: app.baseUrl, token: other.token, retries: 0 });
    await elsewhere.meSessionDelete({ path: { session_id: session.session_id } });

    const err = await client.authSessionGet().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isSvcApiError(err, 'unauthenticated')).toBe(true);
    expect(err).toMatchObject({ status: 401, operationId: 'authSessionGet' });
    expect(ended).toEqual(['refresh_failed']);
    expect(rotated).toEqual([]);
    expect(client.tokens()).toBeNull();
    expect(count('/auth/session')).toBe(2);
    expect(count('/auth/refresh', 401)).toBe(1);

    // Later calls fail straight away; still one refresh.
    await expect(client.meSessionsList()).rejects.toMatchObject({ status: 401 });
    expect(count('/auth/refresh')).toBe(1);
    expect(ended).toEqual(['refresh_failed']);
  });

  test('logout ends the session on the server, also after the access token expired', async () => {
    for (const expired of [false, true]) {
      const { session } = await newAccount(app, smtp, 'sdk-logout');
      const { client, count, ended } = recorded(pairOf(session), { refreshAheadMs: false });
      await withClock(expired ? 16 * MINUTE : 0, () => client.logout());
      expect(ended).toEqual(['logout']);
      expect(client.tokens()).toBeNull();
      expect(count('/auth/refresh')).toBe(expired ? 1 : 0);
      const [row] = await app.sql<{ revoked_reason: string }[]>`
        select revoked_reason from sessions where id = ${session.session_id}`;
      expect(row!.revoked_reason).toBe('logout');
    }
  });
});

describe('the README recipe', () => {
  // The "Signing in" snippet of sdk/README.md, run as written: only the URL and the file name are
  // replaced, and `email`, `password` and `askForCode` are supplied.
  async function readmeSnippet(): Promise<string> {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .find((code) => code.includes('createSessionClient('));
    if (!block) throw new Error('no createSessionClient snippet in sdk/README.md');
    return block;
  }

  test('signs in once, resumes from the file, persists the rotated pair, forgets an ended session', async () => {
    const email = uniqueEmail('sdk-readme');
    const password = 'correct horse battery staple';
    await signUp(app, smtp, email, password);
    const dir = join(process.cwd(), '.tmp', `readme-${randomUUID()}`);
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'session.json');
    let codesAsked = 0;
    const seen = smtp.messages.length;
    (globalThis as Record<string, unknown>).__readme = {
      email,
      password,
      askForCode: async () => {
        codesAsked += 1;
        const mail = await smtp.waitFor(
          (m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && /\d{6}/.test(m.text),
        );
        return codeIn(mail);
      },
    };
    const snippet = await readmeSnippet();
    expect(snippet).toContain("'https://api.example.com'");
    expect(snippet).toContain("'session.json'");
    const source =
      'const { email, password, askForCode } = (globalThis as any).__readme;\n' +
      snippet
        .replace("'https://api.example.com'", JSON.stringify(app.baseUrl))
        .replace("'session.json'", JSON.stringify(file));
    let runs = 0;
    const run = async () => {
      const module = join(dir, `run-${(runs += 1)}.ts`);
      await writeFile(module, source);
      await import(/* @vite-ignore */ pathToFileURL(module).href);
    };
    const saved = async () => JSON.parse(await readFile(file, 'utf8')) as SessionTokens;

    try {
      await run();
      expect(codesAsked).toBe(1);
      const first = await saved();
      expect(Object.keys(first).sort()).toEqual(['refreshToken', 'sessionId', 'token']);

      // A later run resumes from the file; the token has expired by then and is refreshed.
      await withClock(16 * MINUTE, run);
      expect(codesAsked).toBe(1);
      const second = await saved();
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.refreshToken).not.toBe(first.refreshToken);
      expect(await refreshTokenRows(first.sessionId)).toEqual([{ spent: true }, { spent: false }]);

      // Signed out elsewhere: the next run fails with 401 and the file is gone.
      await revokeSession(app.sql, first.sessionId, 'deleted', app.clock.now());
      await expect(run()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
      expect(existsSync(file)).toBe(false);
    } finally {
      delete (globalThis as Record<string, unknown>).__readme;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
