// A signed-in session in credentials.yaml: the SDK's SessionTokens stored as token, refresh_token,
// session_id and, while the access token is elevated (svcctl sudo), elevated_until. Other keys of the
// profile's entry are kept on every write.
//
// Several svcctl processes may use one profile at once, so a write checks what the file holds: a
// refresh only updates the same session (not one a new `svcctl login` put there meanwhile, nor one a
// `svcctl logout` removed), and a sign-in replaces whatever was there.
import type { SessionTokens } from '@svcplatform/sdk';
import { readCredentials, writeCredentials, type Credentials } from './credentials.js';

/** The session of a profile's credentials; null for none, or for an API token without a session. */
export function sessionOf(creds: Credentials | undefined): SessionTokens | null {
  const token = creds?.token;
  const refreshToken = creds?.refresh_token;
  const sessionId = creds?.session_id;
  if (typeof token !== 'string' || typeof refreshToken !== 'string' || typeof sessionId !== 'string')
    return null;
  if (!token || !refreshToken || !sessionId) return null;
  const elevatedUntil = creds?.elevated_until;
  return { token, refreshToken, sessionId, ...(typeof elevatedUntil === 'string' ? { elevatedUntil } : {}) };
}

export async function readSession(profile: string, dir: string): Promise<SessionTokens | null> {
  return sessionOf(await readCredentials(profile, dir));
}

/**
 * Saves a pair. `claim`: a new sign-in, which replaces whatever the profile holds; otherwise only a
 * pair of the session the profile still holds is written. True when written.
 */
export async function storeSession(
  profile: string,
  tokens: SessionTokens,
  dir: string,
  options: { claim: boolean },
): Promise<boolean> {
  const stored = await readCredentials(profile, dir);
  if (!options.claim && stored?.session_id !== tokens.sessionId) return false;
  const { elevated_until: _previous, ...rest } = stored ?? {};
  await writeCredentials(
    profile,
    {
      ...rest,
      token: tokens.token,
      refresh_token: tokens.refreshToken,
      session_id: tokens.sessionId,
      // Written with the token it describes, and gone with it: an un-elevated token has none.
      ...(tokens.elevatedUntil ? { elevated_until: tokens.elevatedUntil } : {}),
    },
    dir,
  );
  return true;
}

/**
 * Removes the profile's token, refresh token, session id and elevated_until; with `sessionId`, only
 * while the profile still holds that session. True when something was removed.
 */
export async function forgetCredentials(profile: string, dir: string, sessionId?: string): Promise<boolean> {
  const stored = await readCredentials(profile, dir);
  if (!stored) return false;
  if (sessionId !== undefined && stored.session_id !== sessionId) return false;
  const { token, refresh_token, session_id, elevated_until: _elevatedUntil, ...rest } = stored;
  if (token === undefined && refresh_token === undefined && session_id === undefined) return false;
  await writeCredentials(profile, Object.keys(rest).length > 0 ? rest : null, dir);
  return true;
}
