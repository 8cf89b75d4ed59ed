// Gateway tickets (DECISIONS.md §6 "The edge gateway"): EdDSA JWTs signed by the API with keys of their
// own table (ticket_signing_keys, rotated like the access-token keys), verified by any gateway. A ticket
// names one purpose and one resource; its `jti` is the gateway_tickets row that records its single
// redemption. The checks follow RFC 8725 as the access tokens do: one algorithm, the key by kid from our
// table, and `typ`/`aud` of their own so neither an access token nor a ticket of another purpose passes
// (the class of Wings' GHSA-8r6w-3qq5-4p4r: a token of one kind opening another door).
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import type { Sql } from '../db/client.js';
import type { Clock } from '../clock.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { KeyRing, SIGNING_ALG, type SigningKey } from '../auth/crypto/signing-keys.js';

export const TICKET_PURPOSES = ['console', 'shell', 'screen', 'download', 'file_session'] as const;
export type TicketPurpose = (typeof TICKET_PURPOSES)[number];

const TICKET_TYPE = 'svc-ticket+jwt';
const TICKET_ISSUER = 'svc-control-plane';
const TICKET_AUDIENCE = 'svc-gateway';
const MAX_TICKET_LENGTH = 2048;

/**
 * Redemption deadlines (DECISIONS.md §6): console and screen 60 s, shell 10 s, download 5 min; a file
 * session is used as often as wanted for its 15 minutes.
 */
export const TICKET_TTL_SECONDS: Record<TicketPurpose, number> = {
  console: 60,
  shell: 10,
  screen: 60,
  download: 300,
  file_session: 900,
};

/** The ticket keys: they sign for a month, and verify 15 minutes longer (the longest ticket). */
export function ticketKeyRing(sql: Sql, clock: Clock, box: SecretBox): KeyRing {
  return new KeyRing(sql, clock, box, {
    table: 'ticket_signing_keys',
    accessTokenTtlSeconds: 60,
    maxTokenTtlSeconds: 15 * 60,
  });
}

export interface TicketClaims {
  id: string;
  purpose: TicketPurpose;
  resourceId: string;
  /** Who asked for it (`sub`): the gateway counts open sockets per user before spending it. */
  userId: string;
  expiresAt: Date;
  /** The one file a download ticket opens (claim `pth`): the signature covers it. */
  path?: string;
}

/** Signs with `key`: the ring's current signing key, read by the caller (see features/consoles/tickets.ts). */
export async function signTicket(key: SigningKey, claims: TicketClaims, now: Date): Promise<string> {
  return new SignJWT({
    pur: claims.purpose,
    res: claims.resourceId,
    ...(claims.path === undefined ? {} : { pth: claims.path }),
  })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: TICKET_TYPE })
    .setIssuer(TICKET_ISSUER)
    .setAudience(TICKET_AUDIENCE)
    .setJti(claims.id)
    .setSubject(claims.userId)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.ceil(claims.expiresAt.getTime() / 1000))
    .sign(key.privateKey);
}

/**
 * The ticket's claims when it is ours, unexpired at `now` and of `purpose`; null otherwise (every
 * refusal looks alike to the client). Its single use is the redemption's business (store.ts).
 */
export async function verifyTicket(
  ring: KeyRing,
  token: string,
  purpose: TicketPurpose,
  now: Date,
): Promise<TicketClaims | null> {
  if (token.length > MAX_TICKET_LENGTH) return null;
  try {
    const { kid, alg, typ } = decodeProtectedHeader(token);
    if (alg !== SIGNING_ALG || typ !== TICKET_TYPE || typeof kid !== 'string') return null;
    const key = await ring.verificationKey(kid, now);
    if (!key) return null;
    const { payload } = await jwtVerify(token, key.publicKey, {
      algorithms: [SIGNING_ALG],
      typ: TICKET_TYPE,
      issuer: TICKET_ISSUER,
      audience: TICKET_AUDIENCE,
      currentDate: now,
      requiredClaims: ['jti', 'exp', 'sub', 'pur', 'res'],
    });
    const { pur, res, jti, sub, exp, pth } = payload;
    if (pur !== purpose || typeof res !== 'string' || typeof jti !== 'string' || typeof sub !== 'string')
      return null;
    if (pth !== undefined && typeof pth !== 'string') return null;
    if ((purpose === 'download') !== (typeof pth === 'string')) return null;
    const claims: TicketClaims = { id: jti, purpose, resourceId: res, userId: sub, expiresAt: new Date(exp! * 1000) };
    if (typeof pth === 'string') claims.path = pth;
    return claims;
  } catch {
    return null;
  }
}

/** The WebSocket URL of a ticket: GATEWAY_PUBLIC_URL as ws:// or wss://, `/<purpose>?ticket=T`. */
export function ticketUrl(gatewayPublicUrl: string, purpose: TicketPurpose, token: string): string {
  const url = new URL(`${gatewayPublicUrl}/${purpose}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('ticket', token);
  return url.toString();
}
