import { randomUUID } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWTPayload,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_AUDIENCE,
  ACCESS_TOKEN_ISSUER,
  AccessTokenError,
  signAccessToken,
  verifyAccessToken,
  type AccessTokenErrorReason,
} from '../../server/src/auth/crypto/access-tokens.js';
import { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createTestDatabase, TestClock, testBox } from '../support/app.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
let clock: TestClock;
let ring: KeyRing;
let kid: string;
let privateKey: CryptoKey;

const user = randomUUID();
const session = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 2 });
  clock = new TestClock();
  ring = new KeyRing(sql, clock, testBox);
  ({ kid, privateKey } = await ring.currentSigningKey());
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

function seconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}

function parts(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')),
  };
}

/** A token signed with the ring's real key but with claims and header of our choosing. */
async function forge(
  claims: JWTPayload,
  header: Record<string, unknown> = {},
  key: CryptoKey | Uint8Array = privateKey,
): Promise<string> {
  const iat = seconds(clock.now());
  const payload: JWTPayload = {
    iss: ACCESS_TOKEN_ISSUER,
    aud: ACCESS_TOKEN_AUDIENCE,
    sub: user,
    sid: session,
    jti: randomUUID(),
    iat,
    exp: iat + 900,
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt', ...header }).sign(key);
}

async function reasonFor(token: string, now = clock.now()): Promise<AccessTokenErrorReason> {
  try {
    await verifyAccessToken(ring, token, now);
  } catch (err) {
    expect(err).toBeInstanceOf(AccessTokenError);
    return (err as AccessTokenError).reason;
  }
  throw new Error('the token was accepted');
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('signAccessToken', () => {
  it('signs an EdDSA JWT with kid and typ, and the claims of DECISIONS.md §3', async () => {
    const now = clock.now();
    const { token, expiresAt, jti } = await signAccessToken(ring, { sub: user, sid: session }, now);
    const { header, payload } = parts(token);
    expect(header).toEqual({ alg: 'EdDSA', kid, typ: 'at+jwt' });
    expect(payload).toEqual({
      iss: ACCESS_TOKEN_ISSUER,
      aud: ACCESS_TOKEN_AUDIENCE,
      sub: user,
      sid: session,
      jti,
      iat: seconds(now),
      exp: seconds(now) + 900,
    });
    expect(expiresAt).toEqual(new Date((seconds(now) + 900) * 1000));
  });

  it('carries elevated_until in unix seconds and a longer lifetime when asked', async () => {
    const now = clock.now();
    const until = new Date(now.getTime() + 8 * 3600_000 + 123);
    const { token, expiresAt } = await signAccessToken(
      ring,
      { sub: user, sid: session, elevatedUntil: until, ttlSeconds: 3600 },
      now,
    );
    expect(parts(token).payload.elevated_until).toBe(seconds(until));
    expect(expiresAt.getTime() - now.getTime()).toBeLessThanOrEqual(3600_000);
    const claims = await verifyAccessToken(ring, token, now);
    expect(claims.elevatedUntil).toEqual(new Date(seconds(until) * 1000));
  });

  it('gives every token its own jti', async () => {
    const now = clock.now();
    const a = await signAccessToken(ring, { sub: user, sid: session }, now);
    const b = await signAccessToken(ring, { sub: user, sid: session }, now);
    expect(a.jti).not.toBe(b.jti);
    expect(a.token).not.toBe(b.token);
  });

  it.each([0, -1, 3601, 1.5])('refuses a lifetime of %s seconds', async (ttlSeconds) => {
    await expect(signAccessToken(ring, { sub: user, sid: session, ttlSeconds }, clock.now())).rejects.toThrow(
      RangeError,
    );
  });
});

describe('verifyAccessToken', () => {
  it('answers the claims of a token it signed', async () => {
    const now = clock.now();
    const { token, expiresAt, jti } = await signAccessToken(ring, { sub: user, sid: session }, now);
    expect(await verifyAccessToken(ring, token, now)).toEqual({
      sub: user,
      sid: session,
      jti,
      exp: expiresAt,
      elevatedUntil: null,
      elevationEpoch: 0,
    });
  });

  it("carries an elevated token's elevation epoch (elv), which leaving elevation moves on", async () => {
    const now = clock.now();
    const until = new Date(now.getTime() + 60_000);
    const { token } = await signAccessToken(ring, { sub: user, sid: session, elevatedUntil: until, elevationEpoch: 3 }, now);
    expect(await verifyAccessToken(ring, token, now)).toMatchObject({ elevatedUntil: until, elevationEpoch: 3 });
  });

  it('refuses a token from its exp on, by the injected clock', async () => {
    const now = clock.now();
    const { token, expiresAt } = await signAccessToken(ring, { sub: user, sid: session }, now);
    expect((await verifyAccessToken(ring, token, new Date(expiresAt.getTime() - 1000))).sub).toBe(user);
    expect(await reasonFor(token, expiresAt)).toBe('expired');
    expect(await reasonFor(token, new Date(expiresAt.getTime() + 3600_000))).toBe('expired');
  });

  it('reports no elevation once elevated_until has passed, while the token is still valid', async () => {
    const now = clock.now();
    const until = new Date(now.getTime() + 60_000);
    const { token } = await signAccessToken(ring, { sub: user, sid: session, elevatedUntil: until }, now);
    expect((await verifyAccessToken(ring, token, now)).elevatedUntil).toEqual(until);
    expect(
      (await verifyAccessToken(ring, token, new Date(now.getTime() + 120_000))).elevatedUntil,
    ).toBeNull();
  });

  it('refuses a token whose payload was changed', async () => {
    const { token } = await signAccessToken(ring, { sub: user, sid: session }, clock.now());
    const [h, p, s] = token.split('.');
    const payload = { ...JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')), sub: randomUUID() };
    expect(await reasonFor(`${h}.${b64(payload)}.${s}`)).toBe('bad_signature');
  });

  it('refuses a token whose signature was changed', async () => {
    const { token } = await signAccessToken(ring, { sub: user, sid: session }, clock.now());
    const [h, p, s] = token.split('.');
    const sig = Buffer.from(s!, 'base64url');
    sig[0] = sig[0]! ^ 1;
    expect(await reasonFor(`${h}.${p}.${sig.toString('base64url')}`)).toBe('bad_signature');
  });

  it('refuses an expired token that was also tampered with as a bad signature, not as expired', async () => {
    const { token, expiresAt } = await signAccessToken(ring, { sub: user, sid: session }, clock.now());
    const [h, p, s] = token.split('.');
    const payload = {
      ...JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')),
      exp: seconds(expiresAt) + 86_400,
    };
    expect(await reasonFor(`${h}.${b64(payload)}.${s}`, new Date(expiresAt.getTime() + 1000))).toBe(
      'bad_signature',
    );
  });

  describe('algorithm confusion (RFC 8725 §2.1, §3.1)', () => {
    it('refuses HS256 with the public key bytes as the HMAC secret', async () => {
      const jwk = await exportJWK((await ring.verificationKey(kid))!.publicKey);
      const secrets = [
        Buffer.from(jwk.x!, 'base64url'),
        Buffer.from(JSON.stringify(jwk)),
        Buffer.from(jwk.x!, 'utf8'),
      ];
      for (const secret of secrets) {
        expect(await reasonFor(await forge({}, { alg: 'HS256' }, secret))).toBe('bad_signature');
      }
    });

    it('refuses alg none, with and without a signature part', async () => {
      const { token } = await signAccessToken(ring, { sub: user, sid: session }, clock.now());
      const { payload } = parts(token);
      const header = b64({ alg: 'none', kid, typ: 'at+jwt' });
      expect(await reasonFor(`${header}.${b64(payload)}.`)).toBe('bad_signature');
      expect(await reasonFor(`${header}.${b64(payload)}.${token.split('.')[2]}`)).toBe('bad_signature');
    });

    it('refuses the real signature under another algorithm name', async () => {
      const { token } = await signAccessToken(ring, { sub: user, sid: session }, clock.now());
      const [, p, s] = token.split('.');
      const header = b64({ alg: 'Ed25519', kid, typ: 'at+jwt' });
      expect(await reasonFor(`${header}.${p}.${s}`)).toBe('bad_signature');
    });
  });

  describe('keys', () => {
    it('refuses a kid that names no key', async () => {
      expect(await reasonFor(await forge({}, { kid: 'A'.repeat(43) }))).toBe('unknown_key');
      expect(await reasonFor(await forge({}, { kid: '../../etc/passwd' }))).toBe('unknown_key');
    });

    it('refuses a token signed by another key under its own kid', async () => {
      const stranger = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const strangerKid = await calculateJwkThumbprint(await exportJWK(stranger.publicKey));
      expect(await reasonFor(await forge({}, { kid: strangerKid }, stranger.privateKey))).toBe('unknown_key');
    });

    it('refuses a token signed by another key under our kid', async () => {
      const stranger = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      expect(await reasonFor(await forge({}, {}, stranger.privateKey))).toBe('bad_signature');
    });
  });

  describe('audience', () => {
    it.each([
      ['another audience', { aud: 'svc-other' }, {}],
      ['another issuer', { iss: 'https://evil.example' }, {}],
      ['a plain JWT typ', {}, { typ: 'JWT' }],
      ['no typ', {}, { typ: undefined }],
    ])('refuses %s', async (_name, claims, header) => {
      expect(await reasonFor(await forge(claims, header))).toBe('wrong_audience');
    });
  });

  describe('malformed', () => {
    it.each([
      ['empty', ''],
      ['not a JWT', 'svc_rt_abc'],
      ['two parts', 'a.b'],
      ['garbage parts', 'a.b.c'],
      ['too long', `${'a'.repeat(5000)}.b.c`],
    ])('refuses %s', async (_name, token) => {
      expect(await reasonFor(token)).toBe('malformed');
    });

    it('refuses a token without a kid', async () => {
      expect(await reasonFor(await forge({}, { kid: undefined }))).toBe('malformed');
    });

    it('accepts a well-signed token built the same way (the control for the refusals below)', async () => {
      expect((await verifyAccessToken(ring, await forge({}), clock.now())).sub).toBe(user);
    });

    it.each([
      ['no sid', { sid: undefined }],
      ['no sub', { sub: undefined }],
      ['no jti', { jti: undefined }],
      ['a numeric sid', { sid: 42 }],
      ['elevated_until as text', { elevated_until: '2030-01-01' }],
    ])('refuses a well-signed token with %s', async (_name, claims) => {
      expect(await reasonFor(await forge(claims as JWTPayload))).toBe('malformed');
    });
  });
});
