// The SDK client for one run, imported only when a command actually calls the API.
//
// A token given with --token or SVCCTL_TOKEN, or an API token saved in credentials.yaml, is sent as
// it is and never refreshed. A session saved by `svcctl login` goes through the SDK's session client:
// when the access token is refused (401), the pair is refreshed once and the request sent again, the
// rotated pair is written back to credentials.yaml at once (the previous refresh token is spent), and
// when the server refuses the refresh token the session is over and its credentials are removed.
import type { SessionClient, SessionEndReason, SessionTokens, SvcClient } from '@svcplatform/sdk';
import { cliVersion } from './cli-version.js';
import { readSession, forgetCredentials, storeSession } from './session-store.js';
import { loginCommand, type Settings } from './settings.js';

export async function openClient(settings: Settings): Promise<SvcClient | SessionClient> {
  if (settings.session) return openSessionClient(settings, settings.session);
  const { createClient } = await import('@svcplatform/sdk');
  return createClient({
    baseUrl: settings.baseUrl,
    token: settings.token,
    userAgent: userAgent(),
    fetch: async (request) => {
      const response = await globalThis.fetch(request);
      if (response.status === 401 && settings.token) process.stderr.write(refusedTokenHint(settings));
      return response;
    },
  });
}

/**
 * What to do about an API token the server refused (revoked, expired, or not a token): which token,
 * by where it came from, and how to replace it for this profile. Printed before the problem itself.
 */
export function refusedTokenHint(settings: Settings): string {
  const { profile, tokenSource } = settings;
  const where =
    tokenSource === 'credentials.yaml'
      ? `the API token saved for profile "${profile}"`
      : `the API token given with ${tokenSource ?? '--token'}`;
  const option = profile === 'default' ? '' : ` --profile ${profile}`;
  const fix =
    tokenSource === 'credentials.yaml'
      ? `remove it (svcctl${option} logout), then sign in (${loginCommand(profile)}) or save a new token (svcctl tokens create --save-as ${profile})`
      : 'give a current token, or leave it out to use the profile\'s credentials';
  return `svcctl: ${where} was refused (revoked, expired or mistyped): ${fix}\n`;
}

/** For public operations (sign-up, password reset): no token is sent, whatever the profile holds. */
export async function openPublicClient(settings: Settings): Promise<SvcClient> {
  const { createClient } = await import('@svcplatform/sdk');
  return createClient({ baseUrl: settings.baseUrl, userAgent: userAgent() });
}

export function isSessionClient(client: SvcClient | SessionClient): client is SessionClient {
  return typeof (client as Partial<SessionClient>).tokens === 'function';
}

export interface SessionClientHooks {
  /** A new sign-in: its pair replaces whatever the profile holds. Default false. */
  claim?: boolean;
  /**
   * Called once the credentials were removed for the end of the session (`removed`: they still held
   * it). Without it, a session refused by the server is announced on stderr.
   */
  onEnded?: (reason: SessionEndReason, removed: boolean) => void;
}

/**
 * A session client whose pair lives in the profile's credentials: `session` as saved, or null to sign
 * in (`login`, `verifyCode`) with `claim`.
 */
export async function openSessionClient(
  settings: Settings,
  session: SessionTokens | null,
  hooks: SessionClientHooks = {},
): Promise<SessionClient> {
  const { createSessionClient } = await import('@svcplatform/sdk');
  const { profile, configDir: dir } = settings;
  let claim = hooks.claim === true;
  let sessionId = session?.sessionId ?? null;
  return createSessionClient({
    baseUrl: settings.baseUrl,
    session,
    userAgent: userAgent(),
    // A svcctl process lives for one command and loads its pair from the file every time, so timing
    // a refresh by the token's `exp` would trust this machine's clock against the server's; a skewed
    // clock would then rotate on every command. The server's 401 decides instead.
    refreshAheadMs: false,
    fetch: (request) => withLatestRefreshToken(request, settings, () => sessionId),
    onTokens: async (tokens) => {
      const written = await storeSession(profile, tokens, dir, { claim });
      if (written) claim = false;
      sessionId = tokens.sessionId;
    },
    onSessionEnded: async (reason) => {
      const removed = sessionId !== null && (await forgetCredentials(profile, dir, sessionId));
      if (hooks.onEnded) hooks.onEnded(reason, removed);
      else if (reason === 'refresh_failed' && removed) {
        process.stderr.write(
          `svcctl: the session of profile "${profile}" has ended (signed out, expired, or the password was changed); its saved credentials were removed. Sign in again: ${loginCommand(profile)}\n`,
        );
      }
    },
  });
}

/**
 * Another svcctl may have refreshed this session since this one read the file, spending the refresh
 * token held here; presenting it again after the server's 10-second grace would end the session for
 * both. So a refresh goes out with the newest refresh token the file holds for the same session, and
 * with its newest access token in Authorization: another svcctl may have elevated (`svcctl sudo
 * elevate`) or left elevation meanwhile, and the server carries over the window of the token sent.
 */
async function withLatestRefreshToken(
  request: Request,
  settings: Settings,
  sessionId: () => string | null,
): Promise<Response> {
  const held = sessionId();
  if (held && request.method === 'POST' && new URL(request.url).pathname.endsWith('/auth/refresh')) {
    const stored = await readSession(settings.profile, settings.configDir).catch(() => null);
    if (stored?.sessionId === held) {
      const body = (await request
        .clone()
        .json()
        .catch(() => ({}))) as { refresh_token?: unknown };
      const authorization = `Bearer ${stored.token}`;
      if (
        body.refresh_token !== stored.refreshToken ||
        request.headers.get('authorization') !== authorization
      ) {
        const headers = new Headers(request.headers);
        headers.delete('content-length');
        headers.set('authorization', authorization);
        request = new Request(request.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ refresh_token: stored.refreshToken }),
          signal: request.signal,
        });
      }
    }
  }
  return globalThis.fetch(request);
}

function userAgent(): string {
  return `svcctl/${cliVersion()}`;
}
