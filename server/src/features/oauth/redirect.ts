// Where an OAuth flow may send the browser back (OAUTH_REDIRECT_ALLOWLIST) and how the outcome rides
// along. Pure.
import type { Config } from '../../config.js';
import { invalidFieldValue } from '../../http/errors.js';

/** The seed's four callback errors (document 1, "OAuth"). */
export type CallbackError = 'email_conflict' | 'email_required' | 'reseller_paused' | 'login_failed';

/**
 * `redirect_to` as given, when it equals an allowlist entry exactly. No normalisation of any kind
 * (case, trailing slash, percent-encoding, userinfo, backslashes): what is compared is what the
 * browser will be sent to (OAuth 2.0 Security BCP, RFC 9700 §4.1.3: exact string matching).
 */
export function requireAllowedRedirect(config: Config, redirectTo: string): string {
  if (!config.oauthRedirectAllowlist.includes(redirectTo)) {
    throw invalidFieldValue(
      'redirect_to is not one of the registered redirect URLs (OAUTH_REDIRECT_ALLOWLIST).',
      [{ location: 'query', pointer: 'redirect_to', message: 'is not a registered redirect URL' }],
    );
  }
  return redirectTo;
}

export type Outcome = { key: string } | { linked: string } | { error: CallbackError };

/** `redirectTo` (an allowlist entry) with the outcome added to its query. */
export function withOutcome(redirectTo: string, outcome: Outcome): string {
  const url = new URL(redirectTo);
  for (const [name, value] of Object.entries(outcome)) url.searchParams.set(name, value as string);
  return url.href;
}

/** The caller asked for JSON and not HTML (a front end's fetch, not a browser navigation). */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  return types.includes('application/json') && !types.includes('text/html');
}
