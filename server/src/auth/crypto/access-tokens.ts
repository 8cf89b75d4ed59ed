// Access tokens: JWTs signed with EdDSA over Ed25519 (RFC 8037), per DECISIONS.md §3.
//
// The verifier follows RFC 8725 (JWT best current practice): exactly one algorithm is accepted
// (§3.1: no `none`, no HS256 made with the public key as the HMAC secret), the key comes from our
// own table by kid and never from the token, and `typ`, `iss` and `aud` are checked so that a JWT
// signed with these keys for some other purpose cannot pass as an access token (§3.9, §3.11).
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import type { KeyRing } from './signing-keys.js';
import { SIGNING_ALG } from './signing-keys.js';

/**
 * `iss`: who signed the token. Constant because one deployment has one control plane; not the base
 * URL, which differs per reseller hostname while the tokens are the same.
 */
export const ACCESS_TOKEN_ISSUER = 'svc-control-plane';
/** `aud`: the only party that accepts the token, this API (`/api/v2`). */
export const ACCESS_TOKEN_AUDIENCE = 'svc-api-v2';
/** Header `typ` from RFC 9068 §2.1, the JWT profile for OAuth 2.0 access tokens. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';

// Our tokens are a few hundred characters; anything much longer is refused unparsed.
const MAX_TOKEN_LENGTH = 4096;

export type AccessTokenErrorReason =
  'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'wrong_audience';

const MESSAGES: Record<AccessTokenErrorReason, string> = {
  malformed: 'the access token is not a well-formed access token',
  unknown_key: 'the access token names a key that is unknown or no longer valid',
  bad_signature: 'the access token signature does not verify',
  expired: 'the access token has expired',
  wrong_audience: 'the access token was not issued for this API',
};

/** Every refusal of `verifyAccessToken`; all of them answer 401 `unauthenticated`. */
export class AccessTokenError extends Error {
  override readonly name = 'AccessTokenError';
  constructor(
    readonly reason: AccessTokenErrorReason,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES[reason], options);
  }
}

export interface AccessTokenInput {
  /** The user id. */
  sub: string;
  /** The session family id; checked against the database on every request. */
  sid: string;
  /** End of the elevated window, carried while the session is elevated. */
  elevatedUntil?: Date | null;
  /**
   * The session's elevation epoch the elevation belongs to (claim `elv`): leaving elevation moves the
   * session's epoch on, and a token of an earlier epoch is no longer elevated.
   */
  elevationEpoch?: number;
  /** Defaults to the ring's accessTokenTtlSeconds; at most its maxTokenTtlSeconds. */
  ttlSeconds?: number;
}

export interface AccessTokenClaims {
  sub: string;
  sid: string;
  jti: string;
  /** The token's `exp`. */
  exp: Date;
  /** `elevated_until`, or null when absent or already passed at verification time. */
  elevatedUntil: Date | null;
  /** `elv`: the session's elevation epoch the elevation belongs to (0 when absent). */
  elevationEpoch: number;
}

export async function signAccessToken(
  ring: KeyRing,
  input: AccessTokenInput,
  now: Date,
): Promise<{ token: string; expiresAt: Date; jti: string }> {
  const ttl = input.ttlSeconds ?? ring.options.accessTokenTtlSeconds;
  // The key ring keeps a retired key verifying for maxTokenTtlSeconds only; a longer token would
  // outlive its key.
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > ring.options.maxTokenTtlSeconds) {
    throw new RangeError(`access token lifetime must be 1..${ring.options.maxTokenTtlSeconds} seconds`);
  }
  const key = await ring.currentSigningKey(now);
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttl;
  const jti = randomUUID();
  const claims: Record<string, unknown> = { sid: input.sid };
  if (input.elevatedUntil) {
    claims.elevated_until = Math.floor(input.elevatedUntil.getTime() / 1000);
    claims.elv = input.elevationEpoch ?? 0;
  }
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: ACCESS_TOKEN_TYPE })
    .setIssuer(ACCESS_TOKEN_ISSUER)
    .setAudience(ACCESS_TOKEN_AUDIENCE)
    .setSubject(input.sub)
    .setJti(jti)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { token, expiresAt: new Date(exp * 1000), jti };
}

/**
 * Payloads of tokens whose signature this process verified, by the token's exact text (signature
 * included, so nothing unverified can match). An EdDSA verification is the largest CPU cost of an
 * authenticated request, and a client polling an operation sends the same token many times a second.
 * The key is still looked up (a withdrawn key refuses at once), and expiry is checked on every use.
 */
interface Verified {
  payload: Record<string, unknown>;
  /** The header's key id, as verified: a repeat skips decoding the header again. */
  kid: string;
}
const VERIFIED = new Map<string, Verified>();
const VERIFIED_MAX = 10_000;

function remember(token: string, verified: Verified): void {
  if (VERIFIED.size >= VERIFIED_MAX) VERIFIED.delete(VERIFIED.keys().next().value!);
  VERIFIED.set(token, verified);
}

/**
 * The claims of a valid access token, or an AccessTokenError. The signature is checked before any
 * claim, so a tampered token is `bad_signature` whatever its claims say. Failures of the database
 * (key lookup) are not AccessTokenErrors and propagate: they are not the caller's fault.
 */
export async function verifyAccessToken(
  ring: KeyRing,
  token: string,
  now: Date,
  options: {
    /**
     * Accept a token up to this many seconds past its `exp` (its signature, issuer and audience are
     * still checked). Only for reading an expired elevated token's claims at refresh.
     */
    expiredToleranceSeconds?: number;
  } = {},
): Promise<AccessTokenClaims> {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw new AccessTokenError('malformed');
  // The same bytes verified before: the header, signature, typ, issuer and audience hold; only time
  // moved. Its key is still looked up below and its expiry checked.
  const seen = options.expiredToleranceSeconds ? undefined : VERIFIED.get(token);
  const fresh =
    seen && typeof seen.payload.exp === 'number' && seen.payload.exp * 1000 > now.getTime()
      ? seen
      : undefined;
  let kid = fresh?.kid;
  if (kid === undefined) {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch (cause) {
      throw new AccessTokenError('malformed', { cause });
    }
    // Refused before any lookup; jwtVerify's `algorithms` below enforces the same again.
    if (header.alg !== SIGNING_ALG) throw new AccessTokenError('bad_signature');
    if (typeof header.kid !== 'string') throw new AccessTokenError('malformed');
    kid = header.kid;
  }
  const key = await ring.verificationKey(kid, now);
  if (!key) throw new AccessTokenError('unknown_key');

  let payload = fresh?.payload;
  if (!payload) {
    try {
      ({ payload } = await jwtVerify(token, key.publicKey, {
        algorithms: [SIGNING_ALG],
        typ: ACCESS_TOKEN_TYPE,
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
        requiredClaims: ['sub', 'sid', 'jti', 'iat', 'exp'],
        currentDate: now,
        ...(options.expiredToleranceSeconds ? { clockTolerance: options.expiredToleranceSeconds } : {}),
      }));
    } catch (cause) {
      throw new AccessTokenError(reasonOf(cause), { cause });
    }
    if (!options.expiredToleranceSeconds) remember(token, { payload, kid });
  }

  const { sub, sid, jti, exp, elevated_until: elevatedUntil, elv } = payload;
  if (
    typeof sub !== 'string' ||
    typeof sid !== 'string' ||
    typeof jti !== 'string' ||
    typeof exp !== 'number' ||
    (elevatedUntil !== undefined && !Number.isSafeInteger(elevatedUntil)) ||
    (elv !== undefined && !Number.isSafeInteger(elv))
  ) {
    throw new AccessTokenError('malformed');
  }
  const until = typeof elevatedUntil === 'number' ? new Date(elevatedUntil * 1000) : null;
  return {
    sub,
    sid,
    jti,
    exp: new Date(exp * 1000),
    // A passed deadline reads as "not elevated", so no caller can forget to compare it with now.
    elevatedUntil: until && until > now ? until : null,
    elevationEpoch: typeof elv === 'number' ? elv : 0,
  };
}

function reasonOf(err: unknown): AccessTokenErrorReason {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    return ['iss', 'aud', 'typ'].includes(err.claim) ? 'wrong_audience' : 'malformed';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JOSEAlgNotAllowed) {
    return 'bad_signature';
  }
  if (err instanceof errors.JOSEError) return 'malformed';
  throw err;
}
