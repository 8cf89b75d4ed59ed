// Sign-in rate limits. The seeds fix none of these numbers; per-source ones scale with
// SOURCE_RATE_LIMIT_SCALE (DECISIONS.md §5), per-account ones never do.
import type { Limit } from '../../ratelimit/limiter.js';

const MIN = 60;

// Per address from one source first: ten wrong passwords lock out that source only. Account-wide only
// at a much higher count (NIST SP 800-63B §5.2.2 allows 100 consecutive failures), or anyone could lock
// any owner out of their account from anywhere (issue 26).
export const LOGIN_PER_ADDRESS_AND_SOURCE: Limit = { name: 'login:address-source', max: 10, windowSeconds: 15 * MIN };
export const LOGIN_PER_ADDRESS: Limit = { name: 'login:address', max: 100, windowSeconds: 15 * MIN };
export const LOGIN_PER_SOURCE: Limit = { name: 'login:source', max: 30, windowSeconds: 15 * MIN };
export const VERIFY_PER_SOURCE: Limit = { name: 'login-verify:source', max: 30, windowSeconds: 15 * MIN };
export const SIGNUP_PER_ADDRESS: Limit = { name: 'signup:address', max: 3, windowSeconds: 60 * MIN };
export const SIGNUP_PER_SOURCE: Limit = { name: 'signup:source', max: 20, windowSeconds: 60 * MIN };
export const FORGOT_PER_ADDRESS: Limit = { name: 'forgot:address', max: 3, windowSeconds: 60 * MIN };
export const FORGOT_PER_SOURCE: Limit = { name: 'forgot:source', max: 20, windowSeconds: 60 * MIN };
export const PASSWORD_CHANGE_PER_USER: Limit = { name: 'password-change:user', max: 10, windowSeconds: 15 * MIN };

/** Wrong codes that burn a login challenge, and how long a code lives. */
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_TTL_SECONDS = 10 * MIN;
/** Refresh tokens: absolute lifetime and the grace in which a retry gets the same successor. */
export const REFRESH_ABSOLUTE_TTL_SECONDS = 30 * 24 * 3600;
export const REFRESH_GRACE_SECONDS = 10;
export const ACCESS_TOKEN_TTL_SECONDS = 15 * MIN;
/** An elevated access token lives one hour (seed: "PIN elevation ... access token 1 hour"). */
export const ELEVATED_TOKEN_TTL_SECONDS = 60 * MIN;
/** The elevated window, the same for every method (seed: "PIN elevation window 8 hours"). */
export const ELEVATION_WINDOW_SECONDS = 8 * 60 * MIN;
export const VERIFY_LINK_TTL_SECONDS = 48 * 3600;
export const RESET_LINK_TTL_SECONDS = 60 * MIN;
