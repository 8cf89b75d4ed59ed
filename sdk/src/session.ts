// A signed-in client: holds the session's token pair, refreshes it once when a secured operation
// answers 401 (one refresh in flight, shared by every request that needs it), retries that request
// once, and reports every new pair so the caller can persist it. Refresh tokens rotate on every use
// and a spent one presented again after a 10 s grace ends the whole session (DECISIONS.md §3), so
// the one thing this module must never do is spend the same refresh token twice.
//
// Elevation (sudo) hands out a new access token of the same session without rotating the refresh
// token: the client holds it from then on, and every refresh presents the held access token in
// Authorization, which is how the server carries the elevated window over to the next token.
import { openConsoleWith, openShellWith, type ShellOptions, type SocketOptions } from './sockets.js';
import { createClient, type ClientOptions, type SvcClient } from './client.js';
import { isSvcApiError, isSvcError, type SvcApiError } from './errors.js';
import type { components } from './generated/api.js';
import { operations, type OperationId, type OperationIndexEntry } from './generated/operations.js';
import type { LooseParams, RequestOptions } from './operation-types.js';
import { paginate } from './paginate.js';
import { fileForm, requestOptionsOf, type UploadFile, type UploadOptions } from './upload.js';
import { waitForOperation, type WaitForOperationOptions } from './wait-for-operation.js';

/** What to persist to resume a session later (`session` option, `setTokens`). */
export interface SessionTokens {
  /** The access token (a JWT, valid 15 minutes). */
  token: string;
  /** `svc_rt_...`; single use: every refresh spends it and hands out a successor. */
  refreshToken: string;
  /** The session family; stable across rotations. */
  sessionId: string;
  /**
   * Until when `token` is elevated (sudo), as an ISO date-time; absent (or null) when it is not.
   * Set by the elevation operations, cleared by `sudoExit`, carried across refreshes while the
   * window lasts, and dropped once it has passed.
   */
  elevatedUntil?: string | null;
}

/** `logout`: `logout()` was called. `refresh_failed`: the server refused the refresh token (401). */
export type SessionEndReason = 'logout' | 'refresh_failed';

export interface SessionClientOptions extends Omit<ClientOptions, 'token' | 'getToken'> {
  /** A pair saved earlier, or null (the default) to sign in with `login` and `verifyCode`. */
  session?: SessionTokens | null;
  /**
   * Called with every new pair: after `verifyCode`, after each refresh, and after an elevation
   * operation or `sudoExit` replaced the access token. The previous refresh token is spent from then
   * on, so persist this one. Awaited before the call that caused it goes on.
   */
  onTokens?: (tokens: SessionTokens) => void | Promise<void>;
  /** Called once when the session is over; forget what you persisted. */
  onSessionEnded?: (reason: SessionEndReason) => void | Promise<void>;
  /**
   * Refresh this long before the access token expires (read from its `exp`, not verified), so
   * requests do not have to fail first. Default 60 000; `false` refreshes only after a 401.
   */
  refreshAheadMs?: number | false;
  /** The clock, in milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
}

type LoginChallenge = components['schemas']['LoginChallenge'];
type Session = components['schemas']['Session'];

export interface SessionMethods {
  /** Checks the password and has a 6-digit code emailed; answers the challenge to pass to `verifyCode`. */
  login(
    email: string,
    password: string,
    options?: RequestOptions & { captchaToken?: string },
  ): Promise<LoginChallenge>;
  /** Redeems the emailed code, holds the new session and reports it through `onTokens`. */
  verifyCode(challengeId: string, code: string, options?: RequestOptions): Promise<Session>;
  /**
   * Ends the session on the server and forgets it here, then calls `onSessionEnded('logout')`. The
   * local state is cleared whatever the server answers; a 401 (already ended) is not an error.
   */
  logout(options?: RequestOptions): Promise<void>;
  /** The pair currently held, or null when signed out. */
  tokens(): SessionTokens | null;
  /** Replaces the pair held (null signs out locally). No callback is called. */
  setTokens(tokens: SessionTokens | null): void;
}

export type SessionClient = SvcClient & SessionMethods;

export const DEFAULT_REFRESH_AHEAD_MS = 60_000;

/**
 * Operations that answer a new access token of the held session (`{ token, elevated_until }`, or
 * `{ token }` for `sudoExit`): the client holds that token from then on. The refresh token stays.
 */
const TOKEN_ANSWERS = new Set<string>([
  'sudoSetup',
  'sudoElevate',
  'sudoTotpEnroll',
  'sudoTotpVerify',
  'sudoWebauthnRegister',
  'sudoWebauthnAuthenticate',
  'sudoExit',
] satisfies OperationId[]);

interface Held {
  tokens: SessionTokens;
  /** When to refresh before sending, on our clock; null: only after a 401. */
  refreshAt: number | null;
  /**
   * The server's clock minus ours, estimated from the `iat` of a token we received (0 for a pair
   * given to us): an elevated window is judged on the server's clock, so a skewed clock here neither
   * drops a live one nor keeps a passed one.
   */
  skewMs: number;
}

/** What a refresh ends with: the pair to use, the server's refusal (session ended), or no session. */
type Refreshed = Held | SvcApiError | null;

type ParamsFor = (tokens: SessionTokens | null) => LooseParams;

export function createSessionClient(options: SessionClientOptions): SessionClient {
  const clock = options.now ?? Date.now;
  const ahead = options.refreshAheadMs ?? DEFAULT_REFRESH_AHEAD_MS;
  if (ahead !== false && !(ahead >= 0))
    throw new TypeError(`refreshAheadMs must be >= 0 or false, got ${ahead}`);
  // Calls carry the token per request (below), so the one they go through has none of its own;
  // `raw` gets the current token from a second client.
  const base = createClient({ ...options, token: undefined, getToken: undefined });
  const { raw } = createClient({ ...options, token: undefined, getToken: () => held?.tokens.token });

  let held: Held | null = options.session ? hold(options.session, null) : null;
  let inflight: { from: Held; promise: Promise<Refreshed> } | null = null;

  // Callbacks run one at a time in the order the state changed, so a slow onTokens cannot land
  // after the onSessionEnded that followed it. A callback's error rejects the call that caused it.
  let callbacks: Promise<unknown> = Promise.resolve();
  const inOrder = (fn: () => void | Promise<void>): Promise<void> => {
    const run = callbacks.then(fn);
    callbacks = run.catch(() => undefined);
    return run;
  };

  function hold(tokens: SessionTokens, requestedAt: number | null, skewMs = 0): Held {
    const iat = requestedAt !== null ? jwtTimes(tokens.token)?.iat : null;
    // Issued between our request and its answer: iat (whole seconds) puts the server's clock there.
    const skew = typeof iat === 'number' ? iat * 1000 - requestedAt! : skewMs;
    return { tokens: current(tokens, skew), refreshAt: refreshAtOf(tokens.token, requestedAt), skewMs: skew };
  }

  /** A copy, without an elevated window that is absent or has passed (on the server's clock). */
  function current(tokens: SessionTokens, skewMs: number): SessionTokens {
    const { elevatedUntil, ...pair } = tokens;
    if (typeof elevatedUntil !== 'string' || !(Date.parse(elevatedUntil) > clock() + skewMs)) return pair;
    return { ...pair, elevatedUntil };
  }

  function refreshAtOf(token: string, requestedAt: number | null): number | null {
    if (ahead === false) return null;
    const times = jwtTimes(token);
    if (!times) return null;
    const lifetime = times.iat !== null ? (times.exp - times.iat) * 1000 : null;
    // Never more than half the lifetime ahead, so a fresh token is never due at once (no loop).
    const lead = lifetime !== null ? Math.min(ahead, lifetime / 2) : ahead;
    // A token just received is timed on our own clock, which need not agree with the server's.
    if (requestedAt !== null && lifetime !== null) return requestedAt + lifetime - lead;
    return times.exp * 1000 - lead;
  }

  async function end(reason: SessionEndReason): Promise<void> {
    held = null;
    await inOrder(() => options.onSessionEnded?.(reason));
  }

  async function store(tokens: SessionTokens, requestedAt: number | null, skewMs?: number): Promise<Held> {
    const next = hold(tokens, requestedAt, skewMs);
    held = next;
    await inOrder(() => options.onTokens?.({ ...next.tokens }));
    return next;
  }

  /** One refresh per pair: whoever needs `from` refreshed while it is under way joins it. */
  function refreshFrom(from: Held): Promise<Refreshed> {
    if (inflight?.from === from) return inflight.promise;
    const promise: Promise<Refreshed> = rotate(from).finally(() => {
      if (inflight?.promise === promise) inflight = null;
    });
    inflight = { from, promise };
    return promise;
  }

  async function rotate(from: Held): Promise<Refreshed> {
    const requestedAt = clock();
    let answer: components['schemas']['RefreshedTokens'];
    try {
      // The held access token goes along, expired or not: an elevated one carries its window over.
      answer = await base.authRefresh(
        {
          body: { refresh_token: from.tokens.refreshToken },
          headers: { Authorization: `Bearer ${from.tokens.token}` },
        },
        { retries: 0 },
      );
    } catch (e) {
      if (!isSvcApiError(e) || e.status !== 401) throw e;
      if (held !== from) return held;
      await end('refresh_failed');
      return e;
    }
    if (held !== from) {
      // Only the access token was replaced meanwhile (an elevation, sudoExit): that token stays, but
      // the refresh token it was held with is spent now, so its successor is kept.
      const now = held;
      if (
        now &&
        now.tokens.sessionId === answer.session_id &&
        now.tokens.refreshToken === from.tokens.refreshToken
      )
        return store({ ...now.tokens, refreshToken: answer.refresh_token }, null, now.skewMs);
      // Signed out or given other tokens meanwhile: that decision stands and this pair is dropped.
      return held;
    }
    const elevatedUntil = elevationOf(answer.token, from.tokens.elevatedUntil ?? null);
    return store(
      {
        token: answer.token,
        refreshToken: answer.refresh_token,
        sessionId: answer.session_id,
        ...(elevatedUntil ? { elevatedUntil } : {}),
      },
      requestedAt,
    );
  }

  /** Holds the access token an elevation operation or sudoExit answered, if still that session's. */
  async function adopt(answer: unknown, sessionId: string, requestedAt: number): Promise<void> {
    const { token, elevated_until: until } = (answer ?? {}) as { token?: unknown; elevated_until?: unknown };
    const now = held;
    if (typeof token !== 'string' || token === '' || !now || now.tokens.sessionId !== sessionId) return;
    const { elevatedUntil: _previous, ...pair } = now.tokens;
    await store(
      { ...pair, token, ...(typeof until === 'string' ? { elevatedUntil: until } : {}) },
      requestedAt,
    );
  }

  async function call(
    operationId: string,
    params: LooseParams | ParamsFor = {},
    callOptions?: RequestOptions,
  ): Promise<unknown> {
    const index: Record<string, OperationIndexEntry> = operations;
    const paramsFor = typeof params === 'function' ? params : () => params;
    const op = Object.hasOwn(index, operationId) ? index[operationId]! : null;
    const given = paramsFor(held?.tokens ?? null);
    // Public operations (login, refresh, ...) go out without a token and are never refreshed for;
    // a call that brings its own Authorization header is left alone. Unknown ids throw in `base`.
    if (!op || op.security.length === 0 || hasAuthorization(given.headers)) {
      return base.request(operationId, given, callOptions);
    }
    const signal = callOptions?.signal;

    // Refresh first when the token is about to expire, or wait for a refresh of it already under
    // way (another request got a 401 with it) instead of sending a token known to be refused.
    const current = held;
    const due = current?.refreshAt != null && clock() >= current.refreshAt;
    if (current && (due || inflight?.from === current)) {
      let refreshed: Refreshed = current;
      try {
        refreshed = await unlessAborted(refreshFrom(current), signal);
      } catch (e) {
        // A refresh that could not be made (network, 500) does not end the call: the token may
        // still be good, and if not, the 401 path below tries again. A callback's error or the
        // caller's abort does.
        if (!isSvcError(e) || signal?.aborted) throw e;
      }
      if (isSvcApiError(refreshed)) throw refreshed;
    }

    const send = (pair: SessionTokens | null) => {
      const p = paramsFor(pair);
      const headers = pair ? { ...p.headers, Authorization: `Bearer ${pair.token}` } : p.headers;
      return base.request(operationId, { ...p, headers }, callOptions);
    };
    let used = held?.tokens ?? null;
    let sentAt = clock();
    let answer: unknown;
    try {
      answer = await send(used);
    } catch (e) {
      if (!used || !isSvcApiError(e, 'unauthenticated') || e.status !== 401) throw e;
      const now = held;
      if (!now) throw e;
      // Someone else already refreshed since this request left: retry with their pair.
      let next: Refreshed = now;
      if (now.tokens.token === used.token) next = await unlessAborted(refreshFrom(now), signal);
      if (!next || isSvcApiError(next)) throw e;
      // Exactly one retry: its failure, 401 included, is the answer.
      used = next.tokens;
      sentAt = clock();
      answer = await send(used);
    }
    if (used && TOKEN_ANSWERS.has(operationId)) await adopt(answer, used.sessionId, sentAt);
    return answer;
  }

  const methods = Object.fromEntries(
    Object.keys(operations).map((operationId) => [
      operationId,
      (params?: LooseParams, callOptions?: RequestOptions) => call(operationId, params, callOptions),
    ]),
  );

  const session: SessionMethods = {
    login(email, password, loginOptions = {}) {
      const { captchaToken, ...requestOptions } = loginOptions;
      return base.authLogin(
        {
          body: { email, password },
          ...(captchaToken ? { header: { 'X-Captcha-Token': captchaToken } } : {}),
        },
        requestOptions,
      );
    },

    async verifyCode(challengeId, code, requestOptions) {
      const requestedAt = clock();
      const answer = await base.authLoginVerify(
        { body: { challenge_id: challengeId, code } },
        requestOptions,
      );
      await store(
        { token: answer.token, refreshToken: answer.refresh_token, sessionId: answer.session_id },
        requestedAt,
      );
      return answer;
    },

    async logout(requestOptions) {
      // A refresh under way would hand out a successor after the logout; let it land first.
      await inflight?.promise.catch(() => undefined);
      const signedIn = held;
      if (!signedIn) return;
      let failure: unknown = null;
      try {
        // The body is built per attempt: after a refresh it carries the successor.
        await call(
          'authLogout',
          (pair) => ({ body: { refresh_token: (pair ?? signedIn.tokens).refreshToken } }),
          requestOptions,
        );
      } catch (e) {
        if (!isSvcApiError(e) || e.status !== 401) failure = e;
      }
      // Still this session (possibly rotated): forget it. Null: a failed refresh already ended it.
      if (held && held.tokens.sessionId === signedIn.tokens.sessionId) await end('logout');
      if (failure) throw failure;
    },

    tokens: () => (held ? current(held.tokens, held.skewMs) : null),

    setTokens(tokens) {
      held = tokens ? hold(tokens, null) : null;
    },
  };

  return {
    ...methods,
    raw,
    baseUrl: base.baseUrl,
    request: call,
    uploadAvatar: (file: UploadFile, upload?: UploadOptions) =>
      call('meAvatarUpload', { body: fileForm(file, upload?.filename) }, requestOptionsOf(upload)),
    uploadOrganizationIcon: (id: string, file: UploadFile, upload?: UploadOptions) =>
      call(
        'organizationIconUpload',
        { path: { id }, body: fileForm(file, upload?.filename) },
        requestOptionsOf(upload),
      ),
    // Each page goes through `call`, so a walk outlasting the access token refreshes like any call.
    paginate: (operationId: string, params?: LooseParams, pageOptions?: RequestOptions) =>
      paginate((id, p, o) => call(id, p, o), operationId, params, pageOptions),
    // Each poll goes through `call` too: a long wait outlives the access token.
    waitForOperation: (instanceId: string, operationId: string, waitOptions?: WaitForOperationOptions) =>
      waitForOperation((id, p, o) => call(id, p, o), instanceId, operationId, waitOptions),
    openConsole: (instanceId: string, resourceId: string, socketOptions?: SocketOptions) =>
      openConsoleWith((id, p) => call(id, p), instanceId, resourceId, socketOptions),
    openShell: (instanceId: string, resourceId: string, shellOptions?: ShellOptions) =>
      openShellWith((id, p) => call(id, p), instanceId, resourceId, shellOptions),
    ...session,
  } as unknown as SessionClient;
}

function hasAuthorization(headers: Record<string, string> | undefined): boolean {
  return Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'authorization');
}

/** A JWT's claims, read without verifying (they are only hints: when to refresh, until when elevated). */
function jwtClaims(token: string): Record<string, unknown> | null {
  const payload = token.split('.')[1];
  if (token.split('.').length !== 3 || !payload) return null;
  try {
    const json: unknown = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
    return typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `exp` and `iat` of a JWT. */
function jwtTimes(token: string): { exp: number; iat: number | null } | null {
  const { exp, iat } = jwtClaims(token) ?? {};
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return null;
  return { exp, iat: typeof iat === 'number' && Number.isFinite(iat) && iat < exp ? iat : null };
}

/**
 * The elevated window of a refreshed token: its `elevated_until` claim (seconds), as the server
 * carried it over; `previous` when it says the same to the second (it keeps the milliseconds the
 * elevation answered). A token that is not a JWT keeps `previous` (dropped once passed).
 */
function elevationOf(token: string, previous: string | null): string | undefined {
  const claims = jwtClaims(token);
  if (!claims) return previous ?? undefined;
  const until = claims.elevated_until;
  if (typeof until !== 'number' || !Number.isFinite(until)) return undefined;
  if (previous !== null && Math.abs(Date.parse(previous) - until * 1000) < 1000) return previous;
  return new Date(until * 1000).toISOString();
}

/** Waits for a shared promise, but lets this caller's signal end the wait (not the work). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
