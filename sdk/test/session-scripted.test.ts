// The session client against a scripted auth server: exactly when it refreshes, how often, with
// which token, and what it tells the caller. The real server's side is in session.test.ts.
import { afterEach, describe, expect, test } from 'vitest';
import {
  createSessionClient,
  isSvcApiError,
  SvcApiError,
  type SessionClientOptions,
  type SessionEndReason,
  type SessionTokens,
} from '../src/index.js';
import {
  json,
  problem,
  startScriptedServer,
  type ScriptedServer,
  type SeenRequest,
} from './support/scripted-server.js';

let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const SESSION_ID = '6f1c1f8e-0000-4000-8000-000000000001';
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** An unsigned JWT-shaped token: the client only reads `exp`, `iat` and `elevated_until`. */
const jwt = (n: number, iat: number, exp: number, extra: Record<string, unknown> = {}) =>
  `${b64url({ alg: 'none' })}.${b64url({ n, iat, exp, ...extra })}.sig`;

interface FakeAuth {
  /** The first pair, already live. */
  first: SessionTokens;
  /** Access tokens the server accepts; delete one to expire it. */
  live: Set<string>;
  /** Refresh tokens and whether they are spent; `revoke()` spends them all. */
  refresh: Map<string, 'live' | 'spent'>;
  revoke(): void;
  /** False: every access token is refused, even fresh ones. */
  acceptAccess: boolean;
  /** Set: /auth/refresh answers this status (500, ...) instead of rotating. */
  refreshFailure: number | null;
  /** The elevated window (seconds) of each elevated access token handed out. */
  elevated: Map<string, number>;
  /** How long an elevation lasts, in seconds. Default eight hours. */
  elevationSeconds: number | undefined;
  seen(path: string): SeenRequest[];
}

interface FakeOptions {
  /** Milliseconds before /auth/refresh answers. */
  refreshDelayMs?: number;
  /** Milliseconds before the nth secured request (1-based, counted per path) answers. */
  delayOf?: (n: number, req: SeenRequest) => number;
  /** Lifetime of the access tokens handed out, seconds. */
  ttlSeconds?: number;
  nowSeconds?: () => number;
}

function pathOf(req: SeenRequest): string {
  return new URL(req.url, 'http://x').pathname.replace(/^\/api\/v2/, '');
}

/** A tiny auth server: rotating refresh tokens, access tokens checked against a live set. */
async function fakeAuth(options: FakeOptions = {}): Promise<FakeAuth & { baseUrl: string }> {
  let issued = 0;
  const live = new Set<string>();
  const refresh = new Map<string, 'live' | 'spent'>();
  const ttl = options.ttlSeconds ?? 900;
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const elevated = new Map<string, number>();
  /** An access token; elevated until `until` (seconds) when given. */
  const access = (until?: number): string => {
    issued += 1;
    const iat = nowSeconds();
    const token = jwt(issued, iat, iat + ttl, until ? { elevated_until: until } : {});
    live.add(token);
    if (until) elevated.set(token, until);
    return token;
  };
  const issue = (until?: number): SessionTokens => {
    const pair = { token: access(until), refreshToken: `svc_rt_${issued}`, sessionId: SESSION_ID };
    refresh.set(pair.refreshToken, 'live');
    return pair;
  };
  const first = issue();
  const perPath = new Map<string, number>();

  server = await startScriptedServer((_n, req, res) => {
    const path = pathOf(req);
    const nth = (perPath.get(path) ?? 0) + 1;
    perPath.set(path, nth);
    const later = (ms: number, fn: () => void) => (ms > 0 ? setTimeout(fn, ms) : fn());
    if (path === '/auth/refresh') {
      later(options.refreshDelayMs ?? 0, () => {
        if (fake.refreshFailure !== null) return problem(res, fake.refreshFailure, 'internal-error');
        const presented = (JSON.parse(req.body) as { refresh_token: string }).refresh_token;
        if (refresh.get(presented) !== 'live') return problem(res, 401, 'unauthenticated');
        refresh.set(presented, 'spent');
        // The elevated window of the access token sent along carries over while it lasts.
        const sent = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const until = sent ? elevated.get(sent) : undefined;
        const pair = issue(until !== undefined && until > nowSeconds() ? until : undefined);
        json(res, 200, { token: pair.token, refresh_token: pair.refreshToken, session_id: pair.sessionId });
      });
      return;
    }
    if (path === '/auth/login') return json(res, 200, { challenge_id: SESSION_ID, status: 'code_sent' });
    if (path === '/auth/login/verify') {
      const pair = issue();
      return json(res, 200, {
        token: pair.token,
        refresh_token: pair.refreshToken,
        session_id: pair.sessionId,
        user: { id: SESSION_ID, name: 'T', email: 't@example.test', language: 'en' },
      });
    }
    if (path.startsWith('/public/')) return json(res, 200, { enabled: false, protected_actions: [] });
    // Every other path is secured; the token is checked when the request arrives.
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authenticated = token !== undefined && live.has(token) && fake.acceptAccess;
    later(options.delayOf?.(nth, req) ?? 0, () => {
      if (!authenticated) return problem(res, 401, 'unauthenticated');
      if (path === '/auth/logout') {
        res.writeHead(204).end();
        return;
      }
      if (path === '/auth/sudo/elevate' || path === '/auth/sudo/totp/verify') {
        const until = nowSeconds() + (fake.elevationSeconds ?? 8 * 3600);
        return json(res, 200, { elevated_until: new Date(until * 1000).toISOString(), token: access(until) });
      }
      if (path === '/auth/sudo/exit') return json(res, 200, { token: access() });
      json(res, 200, { session_id: SESSION_ID, token });
    });
  });
  const s = server;
  const fake = {
    baseUrl: s.baseUrl,
    first,
    live,
    refresh,
    acceptAccess: true,
    refreshFailure: null as number | null,
    elevated,
    elevationSeconds: undefined as number | undefined,
    revoke() {
      live.clear();
      for (const key of refresh.keys()) refresh.set(key, 'spent');
    },
    seen: (path: string) => s.requests.filter((r) => pathOf(r) === path),
  };
  return fake;
}

/** A session client that records its callbacks. */
function sessionClient(
  auth: { baseUrl: string; first: SessionTokens },
  extra: Partial<SessionClientOptions> = {},
) {
  const rotated: SessionTokens[] = [];
  const ended: SessionEndReason[] = [];
  const client = createSessionClient({
    baseUrl: auth.baseUrl,
    session: auth.first,
    retries: 0,
    refreshAheadMs: false,
    onTokens: (t) => void rotated.push(t),
    onSessionEnded: (reason) => void ended.push(reason),
    ...extra,
  });
  return { client, rotated, ended };
}

/** Resolves once the server has received a refresh (it answers `refreshDelayMs` later). */
async function refreshUnderWay(auth: FakeAuth): Promise<void> {
  while (auth.seen('/auth/refresh').length === 0) await new Promise((r) => setTimeout(r, 2));
}

const bearer = (req: SeenRequest) => req.headers.authorization?.replace(/^Bearer /, '') ?? null;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('tokens on requests', () => {
  test('secured operations carry the access token; public ones and login carry none', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth);
    await client.authSessionGet();
    await client.publicCaptchaConfigGet({ path: { hostname: 'panel.example.com' } });
    await client.login('a@example.test', 'pw', { captchaToken: 'solved' });
    expect(bearer(auth.seen('/auth/session')[0]!)).toBe(auth.first.token);
    expect(auth.seen('/public/captcha/config/panel.example.com')[0]!.headers.authorization).toBeUndefined();
    const login = auth.seen('/auth/login')[0]!;
    expect(login.headers.authorization).toBeUndefined();
    expect(login.headers['x-captcha-token']).toBe('solved');
    expect(JSON.parse(login.body)).toEqual({ email: 'a@example.test', password: 'pw' });
  });

  test('raw requests carry the current token', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth);
    const { response } = await client.raw.GET('/auth/session');
    expect(response.status).toBe(200);
    expect(bearer(auth.seen('/auth/session')[0]!)).toBe(auth.first.token);
  });

  test('an Authorization header given for one call is sent as is and never refreshed for', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth);
    const err = await rejection(client.authSessionGet({ headers: { Authorization: 'Bearer other' } }));
    expect(isSvcApiError(err, 'unauthenticated')).toBe(true);
    expect(auth.seen('/auth/refresh')).toHaveLength(0);
  });
});

describe('refresh on 401', () => {
  test('refreshes once, retries with the new token and reports the new pair', async () => {
    const auth = await fakeAuth();
    const { client, rotated, ended } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    await expect(client.authSessionGet()).resolves.toMatchObject({ session_id: SESSION_ID });

    const [refresh] = auth.seen('/auth/refresh');
    expect(JSON.parse(refresh!.body)).toEqual({ refresh_token: auth.first.refreshToken });
    // The held access token goes along (it is how an elevated window carries over).
    expect(bearer(refresh!)).toBe(auth.first.token);
    expect(rotated).toEqual([{ token: expect.any(String), refreshToken: 'svc_rt_2', sessionId: SESSION_ID }]);
    expect(client.tokens()).toEqual(rotated[0]);
    expect(auth.seen('/auth/session').map(bearer)).toEqual([auth.first.token, rotated[0]!.token]);
    expect(ended).toEqual([]);
  });

  test('ten parallel requests with an expired token cause exactly one refresh', async () => {
    const auth = await fakeAuth({ refreshDelayMs: 50 });
    const { client, rotated } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    const answers = await Promise.all(Array.from({ length: 10 }, () => client.authSessionGet()));
    expect(answers).toHaveLength(10);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(rotated).toHaveLength(1);
    // Each one: the expired token once, then the new one.
    expect(auth.seen('/auth/session')).toHaveLength(20);
  });

  test('a request sent while a refresh of its token is under way waits for it instead of failing first', async () => {
    const auth = await fakeAuth({ refreshDelayMs: 100 });
    const { client } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    const first = client.authSessionGet();
    await refreshUnderWay(auth); // the first request got its 401
    await client.meSessionsList();
    await first;
    expect(auth.seen('/me/sessions').map(bearer)).toEqual([client.tokens()!.token]);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
  });

  test('a 401 for a token that another request already replaced retries with the new one, no refresh', async () => {
    // The second request's 401 arrives only after the first request's refresh has completed.
    const auth = await fakeAuth({ delayOf: (n) => (n === 2 ? 150 : 0) });
    const { client, rotated } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    await Promise.all([client.authSessionGet(), client.authSessionGet()]);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(rotated).toHaveLength(1);
    expect(auth.seen('/auth/session').map(bearer)).toEqual([
      auth.first.token,
      auth.first.token,
      rotated[0]!.token,
      rotated[0]!.token,
    ]);
  });

  test('a refused refresh ends the session once and every caller gets its own 401', async () => {
    const auth = await fakeAuth({ refreshDelayMs: 30 });
    const { client, rotated, ended } = sessionClient(auth);
    auth.revoke();
    const errors = await Promise.all([
      rejection(client.authSessionGet()),
      rejection(client.meSessionsList()),
      rejection(client.authSessionGet()),
    ]);
    for (const [i, err] of errors.entries()) {
      expect(err).toBeInstanceOf(SvcApiError);
      expect(err).toMatchObject({ status: 401, code: 'unauthenticated' });
      // The original request's error, not the refresh's.
      expect((err as SvcApiError).operationId).toBe(i === 1 ? 'meSessionsList' : 'authSessionGet');
    }
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(ended).toEqual(['refresh_failed']);
    expect(rotated).toEqual([]);
    expect(client.tokens()).toBeNull();

    // Signed out now: requests go without a token, and nothing is refreshed.
    const after = await rejection(client.authSessionGet());
    expect(isSvcApiError(after, 'unauthenticated')).toBe(true);
    expect(auth.seen('/auth/session').at(-1)!.headers.authorization).toBeUndefined();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(ended).toEqual(['refresh_failed']);
  });

  test('a retried request that gets 401 again fails: one refresh, one retry, no loop', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    // Refresh works, but the server refuses every access token (e.g. a key rotation gone wrong).
    auth.acceptAccess = false;
    const err = await rejection(client.authSessionGet());
    expect(isSvcApiError(err, 'unauthenticated')).toBe(true);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(auth.seen('/auth/session')).toHaveLength(2);
    // The session itself is kept: the refresh worked.
    expect(client.tokens()).toEqual(rotated[0]);
  });

  test('a failed refresh that is not a 401 keeps the session and throws that failure', async () => {
    const auth = await fakeAuth();
    auth.refreshFailure = 500;
    const { client, ended } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    const err = await rejection(client.authSessionGet());
    expect(err).toMatchObject({ status: 500, operationId: 'authRefresh' });
    expect(client.tokens()).toEqual(auth.first);
    expect(ended).toEqual([]);
    expect(auth.seen('/auth/session')).toHaveLength(1);
  });

  test('public and sign-in operations are never refreshed for', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth);
    auth.revoke();
    expect(isSvcApiError(await rejection(client.authRefresh({ body: { refresh_token: 'svc_rt_x' } })))).toBe(
      true,
    );
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(client.tokens()).toEqual(auth.first);
  });

  test('403 and other errors are passed through without a refresh', async () => {
    const s = await startScriptedServer((_n, _req, res) => problem(res, 403, 'forbidden'));
    server = s;
    const { client } = sessionClient({
      baseUrl: s.baseUrl,
      first: { token: 't', refreshToken: 'r', sessionId: SESSION_ID },
    });
    expect(await rejection(client.authSessionGet())).toMatchObject({ status: 403 });
    expect(s.requests).toHaveLength(1);
  });

  test("a caller's abort ends its wait for the shared refresh, not the refresh", async () => {
    const auth = await fakeAuth({ refreshDelayMs: 150 });
    const { client, rotated } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    const controller = new AbortController();
    const patient = client.authSessionGet();
    const impatient = rejection(client.meSessionsList({}, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('gave up')), 60);
    expect(await impatient).toMatchObject({ message: 'gave up' });
    await expect(patient).resolves.toBeDefined();
    expect(rotated).toHaveLength(1);
  });

  test('an error thrown by onTokens rejects the call, and the new pair is kept', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth, {
      onTokens: () => {
        throw new Error('disk full');
      },
    });
    auth.live.delete(auth.first.token);
    expect(await rejection(client.authSessionGet())).toMatchObject({ message: 'disk full' });
    expect(client.tokens()!.refreshToken).toBe('svc_rt_2');
    await expect(client.authSessionGet()).resolves.toBeDefined();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
  });
});

describe('refresh ahead of expiry', () => {
  test('refreshes before sending when the token is about to expire, once', async () => {
    let now = Date.now();
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(now / 1000) });
    const { client, rotated } = sessionClient(auth, { refreshAheadMs: 60_000, now: () => now });
    await client.authSessionGet();
    expect(auth.seen('/auth/refresh')).toHaveLength(0);

    now += 841_000; // 14 min 1 s: less than a minute left
    await Promise.all([client.authSessionGet(), client.authSessionGet(), client.meSessionsList()]);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(rotated).toHaveLength(1);
    // No request was sent with the old token, and none failed.
    expect([...auth.seen('/auth/session').slice(1), ...auth.seen('/me/sessions')].map(bearer)).toEqual([
      rotated[0]!.token,
      rotated[0]!.token,
      rotated[0]!.token,
    ]);
    await client.authSessionGet();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
  });

  test('times new tokens on its own clock, so a skewed clock refreshes at most once', async () => {
    // The server's clock is two hours behind ours: every token it issues looks long expired here.
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(Date.now() / 1000) - 7200 });
    const { client } = sessionClient(auth, { refreshAheadMs: 60_000 });
    for (let i = 0; i < 5; i++) await client.authSessionGet();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
  });

  test('a lead longer than the lifetime is cut to half of it, so a fresh token is never due', async () => {
    const auth = await fakeAuth({ ttlSeconds: 60 });
    const { client } = sessionClient(auth, { refreshAheadMs: 10 * 60_000 });
    for (let i = 0; i < 3; i++) await client.authSessionGet();
    expect(auth.seen('/auth/refresh')).toHaveLength(0);
  });

  test('a refused refresh ahead of expiry ends the session and throws its 401', async () => {
    let now = Date.now();
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(now / 1000) });
    const { client, ended } = sessionClient(auth, { refreshAheadMs: 60_000, now: () => now });
    for (const key of auth.refresh.keys()) auth.refresh.set(key, 'spent');
    now += 870_000;
    expect(await rejection(client.authSessionGet())).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(ended).toEqual(['refresh_failed']);
    expect(auth.seen('/auth/session')).toHaveLength(0);
  });

  test('a refresh ahead of expiry that fails (500) still sends the request; an onTokens error fails it', async () => {
    let now = Date.now();
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(now / 1000) });
    const onTokens = () => {
      throw new Error('disk full');
    };
    const { client } = sessionClient(auth, { refreshAheadMs: 60_000, now: () => now, onTokens });
    now += 870_000; // due, but the token is still accepted
    auth.refreshFailure = 500;
    await expect(client.authSessionGet()).resolves.toBeDefined();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(auth.seen('/auth/session').map(bearer)).toEqual([auth.first.token]);

    auth.refreshFailure = null;
    expect(await rejection(client.authSessionGet())).toMatchObject({ message: 'disk full' });
    expect(client.tokens()!.refreshToken).toBe('svc_rt_2');
    expect(auth.seen('/auth/session')).toHaveLength(1);
  });

  test('a token that is not a JWT is only refreshed after a 401', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(
      { baseUrl: auth.baseUrl, first: { ...auth.first, token: 'opaque' } },
      { refreshAheadMs: 60_000 },
    );
    await client.authSessionGet();
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    expect(auth.seen('/auth/session').map(bearer)[0]).toBe('opaque');
  });
});

describe('sign-in and sign-out', () => {
  test('verifyCode holds the new session and reports it', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth, { session: null });
    expect(client.tokens()).toBeNull();
    const challenge = await client.login('a@example.test', 'pw');
    const session = await client.verifyCode(challenge.challenge_id, '123456');
    expect(JSON.parse(auth.seen('/auth/login/verify')[0]!.body)).toEqual({
      challenge_id: SESSION_ID,
      code: '123456',
    });
    const pair = { token: session.token, refreshToken: session.refresh_token, sessionId: session.session_id };
    expect(client.tokens()).toEqual(pair);
    expect(rotated).toEqual([pair]);
    await client.authSessionGet();
    expect(bearer(auth.seen('/auth/session')[0]!)).toBe(session.token);
  });

  test('logout sends the current refresh token, forgets the session and says so', async () => {
    const auth = await fakeAuth();
    const { client, ended } = sessionClient(auth);
    await client.logout();
    const [logout] = auth.seen('/auth/logout');
    expect(bearer(logout!)).toBe(auth.first.token);
    expect(JSON.parse(logout!.body)).toEqual({ refresh_token: auth.first.refreshToken });
    expect(client.tokens()).toBeNull();
    expect(ended).toEqual(['logout']);
    await client.logout(); // nothing held: nothing sent
    expect(auth.seen('/auth/logout')).toHaveLength(1);
  });

  test('logout with an expired token refreshes and presents the successor', async () => {
    const auth = await fakeAuth();
    const { client, rotated, ended } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    await client.logout();
    const logouts = auth.seen('/auth/logout');
    expect(logouts.map((r) => JSON.parse(r.body).refresh_token)).toEqual([
      auth.first.refreshToken,
      rotated[0]!.refreshToken,
    ]);
    expect(client.tokens()).toBeNull();
    expect(ended).toEqual(['logout']);
  });

  test('logout clears the session even when the server says 401', async () => {
    const auth = await fakeAuth();
    const { client, ended } = sessionClient(auth);
    auth.revoke();
    await expect(client.logout()).resolves.toBeUndefined();
    expect(client.tokens()).toBeNull();
    // The refresh it tried was refused, which ended the session already.
    expect(ended).toEqual(['refresh_failed']);
  });

  test('logout clears the session and throws when the server cannot be reached', async () => {
    const auth = await fakeAuth();
    const { client, ended } = sessionClient(auth, { baseUrl: 'http://127.0.0.1:9' });
    const err = await rejection(client.logout());
    expect(err).toMatchObject({ kind: 'network' });
    expect(client.tokens()).toBeNull();
    expect(ended).toEqual(['logout']);
  });

  test('a logout during a refresh waits for it, and the callbacks come in order', async () => {
    const auth = await fakeAuth({ refreshDelayMs: 80 });
    const events: string[] = [];
    const { client } = sessionClient(auth, {
      onTokens: async (t) => {
        await new Promise((r) => setTimeout(r, 30));
        events.push(`tokens ${t.refreshToken}`);
      },
      onSessionEnded: (reason) => void events.push(`ended ${reason}`),
    });
    auth.live.delete(auth.first.token);
    const request = client.authSessionGet();
    await refreshUnderWay(auth);
    await client.logout();
    await request.catch(() => undefined); // its retry may land after the logout
    expect(events).toEqual(['tokens svc_rt_2', 'ended logout']);
    expect(JSON.parse(auth.seen('/auth/logout')[0]!.body)).toEqual({ refresh_token: 'svc_rt_2' });
    expect(client.tokens()).toBeNull();
  });

  test('setTokens replaces the pair; a refresh answer for the old pair is dropped', async () => {
    const auth = await fakeAuth({ refreshDelayMs: 80 });
    const { client, rotated } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    const request = client.authSessionGet();
    await refreshUnderWay(auth);
    const other = { token: 'other', refreshToken: 'svc_rt_other', sessionId: SESSION_ID };
    auth.live.add('other');
    client.setTokens(other);
    await request; // retried with the pair set meanwhile
    expect(client.tokens()).toEqual(other);
    expect(rotated).toEqual([]);
    expect(bearer(auth.seen('/auth/session').at(-1)!)).toBe('other');

    client.setTokens(null);
    expect(isSvcApiError(await rejection(client.authSessionGet()), 'unauthenticated')).toBe(true);
    expect(auth.seen('/auth/refresh')).toHaveLength(1);
  });
});

describe('elevation', () => {
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

  test("an elevation's token is held and reported with elevatedUntil; the refresh token stays", async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    const answer = await client.sudoElevate({ body: { pin: '123456' } });
    expect(bearer(auth.seen('/auth/sudo/elevate')[0]!)).toBe(auth.first.token);
    const elevated = {
      token: answer.token,
      refreshToken: auth.first.refreshToken,
      sessionId: SESSION_ID,
      elevatedUntil: answer.elevated_until,
    };
    expect(rotated).toEqual([elevated]);
    expect(client.tokens()).toEqual(elevated);
    await client.authSessionGet();
    expect(bearer(auth.seen('/auth/session')[0]!)).toBe(answer.token);
    expect(auth.seen('/auth/refresh')).toHaveLength(0);
  });

  test('every elevation operation is adopted the same way (TOTP here)', async () => {
    const auth = await fakeAuth();
    const { client } = sessionClient(auth);
    const answer = await client.sudoTotpVerify({ body: { code: '123456' } });
    expect(client.tokens()).toMatchObject({ token: answer.token, elevatedUntil: answer.elevated_until });
  });

  test('a refresh presents the elevated token, and the window carries over to the new token', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    const answer = await client.sudoElevate({ body: { pin: '123456' } });
    auth.live.delete(answer.token); // the elevated token runs out (it lives an hour)
    await client.authSessionGet();

    const [refresh] = auth.seen('/auth/refresh');
    expect(bearer(refresh!)).toBe(answer.token);
    expect(JSON.parse(refresh!.body)).toEqual({ refresh_token: auth.first.refreshToken });
    const after = rotated.at(-1)!;
    expect(after).toEqual({
      token: expect.any(String),
      refreshToken: expect.stringMatching(/^svc_rt_/),
      sessionId: SESSION_ID,
      elevatedUntil: answer.elevated_until,
    });
    expect(after.refreshToken).not.toBe(auth.first.refreshToken);
    expect(after.token).not.toBe(answer.token);
    expect(auth.elevated.get(after.token)).toBe(Date.parse(answer.elevated_until) / 1000);
    expect(client.tokens()).toEqual(after);
  });

  test('a refresh of an un-elevated token reports no elevatedUntil', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    auth.live.delete(auth.first.token);
    await client.authSessionGet();
    expect(rotated).toHaveLength(1);
    expect(rotated[0]).not.toHaveProperty('elevatedUntil');
  });

  test('sudoExit holds the un-elevated token it answers and drops elevatedUntil', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    await client.sudoElevate({ body: { pin: '123456' } });
    const { token } = await client.sudoExit();
    expect(rotated.at(-1)).toEqual({ token, refreshToken: auth.first.refreshToken, sessionId: SESSION_ID });
    expect(client.tokens()).toEqual(rotated.at(-1));
    await client.authSessionGet();
    expect(bearer(auth.seen('/auth/session')[0]!)).toBe(token);
  });

  test('elevatedUntil is dropped once it has passed, and a later refresh does not bring it back', async () => {
    let now = Date.now();
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(now / 1000) });
    auth.elevationSeconds = 120;
    const { client, rotated } = sessionClient(auth, { now: () => now });
    const answer = await client.sudoElevate({ body: { pin: '123456' } });
    expect(client.tokens()!.elevatedUntil).toBe(answer.elevated_until);

    now += 121_000;
    expect(client.tokens()).toEqual({
      token: answer.token,
      refreshToken: auth.first.refreshToken,
      sessionId: SESSION_ID,
    });
    auth.live.delete(answer.token);
    await client.authSessionGet();
    expect(bearer(auth.seen('/auth/refresh')[0]!)).toBe(answer.token);
    expect(rotated.at(-1)).not.toHaveProperty('elevatedUntil');
  });

  test("the window is judged on the server's clock: a skewed clock here keeps a live one", async () => {
    // Our clock is two days ahead of the server's: its elevated_until is long past by ours.
    const auth = await fakeAuth({ nowSeconds: () => Math.floor(Date.now() / 1000) - 2 * 86_400 });
    const { client, rotated } = sessionClient(auth);
    const answer = await client.sudoElevate({ body: { pin: '123456' } });
    expect(Date.parse(answer.elevated_until)).toBeLessThan(Date.now());
    expect(rotated.at(-1)!.elevatedUntil).toBe(answer.elevated_until);
    expect(client.tokens()!.elevatedUntil).toBe(answer.elevated_until);
    auth.live.delete(answer.token);
    await client.authSessionGet();
    expect(rotated.at(-1)!.elevatedUntil).toBe(answer.elevated_until);
  });

  test('a saved elevatedUntil is kept while it lasts and ignored once passed', async () => {
    const auth = await fakeAuth();
    const future = iso(Math.floor(Date.now() / 1000) + 3600);
    const past = iso(Math.floor(Date.now() / 1000) - 1);
    const { client } = sessionClient({ ...auth, first: { ...auth.first, elevatedUntil: future } });
    expect(client.tokens()!.elevatedUntil).toBe(future);
    client.setTokens({ ...auth.first, elevatedUntil: past });
    expect(client.tokens()).toEqual(auth.first);
    client.setTokens({ ...auth.first, elevatedUntil: null });
    expect(client.tokens()).toEqual(auth.first);
  });

  test('an elevation answered while a refresh spends the refresh token: the elevated token stays, with the successor', async () => {
    const auth = await fakeAuth({
      refreshDelayMs: 150,
      delayOf: (_n, req) => (pathOf(req) === '/auth/sudo/elevate' ? 60 : 0),
    });
    const { client, rotated } = sessionClient(auth);
    const elevating = client.sudoElevate({ body: { pin: '123456' } });
    // The elevation has left with the first token; now another request finds that token dead.
    while (auth.seen('/auth/sudo/elevate').length === 0) await new Promise((r) => setTimeout(r, 2));
    auth.live.delete(auth.first.token);
    const other = client.authSessionGet();
    await refreshUnderWay(auth);
    const answer = await elevating;
    await other;

    expect(auth.seen('/auth/refresh')).toHaveLength(1);
    const successor = rotated.at(-1)!;
    expect(successor.refreshToken).not.toBe(auth.first.refreshToken);
    expect(auth.refresh.get(successor.refreshToken)).toBe('live');
    expect(successor).toMatchObject({ token: answer.token, elevatedUntil: answer.elevated_until });
    expect(client.tokens()).toEqual(successor);
    // The request that waited for the refresh was retried with the elevated token.
    expect(bearer(auth.seen('/auth/session').at(-1)!)).toBe(answer.token);
  });

  test('an elevation answered after the client was given another session is not adopted', async () => {
    const auth = await fakeAuth({ delayOf: (_n, req) => (pathOf(req) === '/auth/sudo/elevate' ? 60 : 0) });
    const { client, rotated } = sessionClient(auth);
    const elevating = client.sudoElevate({ body: { pin: '123456' } });
    while (auth.seen('/auth/sudo/elevate').length === 0) await new Promise((r) => setTimeout(r, 2));
    const other = {
      token: 'other',
      refreshToken: 'svc_rt_other',
      sessionId: '6f1c1f8e-0000-4000-8000-000000000002',
    };
    client.setTokens(other);
    await elevating;
    expect(client.tokens()).toEqual(other);
    expect(rotated).toEqual([]);
  });

  test('a call with its own Authorization header is not adopted', async () => {
    const auth = await fakeAuth();
    const { client, rotated } = sessionClient(auth);
    await client.sudoElevate({
      body: { pin: '123456' },
      headers: { Authorization: `Bearer ${auth.first.token}` },
    });
    expect(rotated).toEqual([]);
    expect(client.tokens()).toEqual(auth.first);
  });
});
