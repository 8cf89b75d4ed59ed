import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessTokenError,
  signAccessToken,
  verifyAccessToken,
} from '../../server/src/auth/crypto/access-tokens.js';
import { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createTestDatabase, TestClock, testBox } from '../support/app.js';

const DAY = 24 * 60 * 60 * 1000;
const ROTATE_MS = 30 * DAY;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pools: Sql[];

// Every test starts from an empty signing_keys table and its own clock.
async function reset(): Promise<void> {
  await pools[0]!`delete from signing_keys`;
}

async function keyRows(): Promise<{ kid: string; created_at: Date; retire_after: Date; expires_at: Date }[]> {
  return pools[0]!`select kid, created_at, retire_after, expires_at from signing_keys order by created_at`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  // Four pools stand for four API processes.
  pools = Array.from({ length: 4 }, () => connect(db.url, { max: 2 }));
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

describe('several processes', () => {
  it('starting together sign with one key and verify each other', async () => {
    await reset();
    const clock = new TestClock();
    const rings = pools.map((p) => new KeyRing(p, clock, testBox));
    const keys = await Promise.all(rings.map((r) => r.currentSigningKey()));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await keyRows()).toHaveLength(1);

    const now = clock.now();
    const tokens = await Promise.all(
      rings.map((r, i) => signAccessToken(r, { sub: `user-${i}`, sid: 's' }, now)),
    );
    for (const ring of rings) {
      for (const [i, t] of tokens.entries()) {
        expect((await verifyAccessToken(ring, t.token, now)).sub).toBe(`user-${i}`);
      }
    }
  });

  it('verify a key that another process made after they started', async () => {
    await reset();
    const clock = new TestClock();
    const early = new KeyRing(pools[0]!, clock, testBox);
    const maker = new KeyRing(pools[1]!, clock, testBox);
    // `early` has looked for keys before any existed.
    expect(await early.verificationKey('A'.repeat(43))).toBeNull();
    const { token } = await signAccessToken(maker, { sub: 'u', sid: 's' }, clock.now());
    expect((await verifyAccessToken(early, token, clock.now())).sub).toBe('u');
  });

  it('rotating at the same moment agree on one new key', async () => {
    await reset();
    const clock = new TestClock();
    const rings = pools.map((p) => new KeyRing(p, clock, testBox));
    const first = await rings[0]!.currentSigningKey();
    clock.advance(ROTATE_MS);
    const next = await Promise.all(rings.map((r) => r.currentSigningKey()));
    expect(new Set(next.map((k) => k.kid)).size).toBe(1);
    expect(next[0]!.kid).not.toBe(first.kid);
    expect(await keyRows()).toHaveLength(2);
  });
});

describe('rotation', () => {
  it('signs with a new key after rotateAfter; the old one verifies its tokens until they expire', async () => {
    await reset();
    const clock = new TestClock();
    const ring = new KeyRing(pools[0]!, clock, testBox);
    const other = new KeyRing(pools[1]!, clock, testBox);
    const first = await ring.currentSigningKey();
    const [row] = await keyRows();
    expect(row!.retire_after.getTime() - row!.created_at.getTime()).toBe(ROTATE_MS);
    expect(row!.expires_at.getTime() - row!.retire_after.getTime()).toBe(3600_000);

    // Ten seconds before retirement: still the first key; sign an ordinary and an elevated token.
    clock.advance(ROTATE_MS - 10_000);
    expect((await ring.currentSigningKey()).kid).toBe(first.kid);
    const ordinary = await signAccessToken(ring, { sub: 'u', sid: 's' }, clock.now());
    const elevated = await signAccessToken(
      ring,
      { sub: 'u', sid: 's', ttlSeconds: 3600, elevatedUntil: new Date(clock.now().getTime() + 8 * 3600_000) },
      clock.now(),
    );

    // Past retirement: a new key signs, and both processes still accept the old key's tokens.
    clock.advance(20_000);
    const second = await ring.currentSigningKey();
    expect(second.kid).not.toBe(first.kid);
    const fresh = await signAccessToken(ring, { sub: 'u', sid: 's' }, clock.now());
    expect(decodeKid(fresh.token)).toBe(second.kid);
    for (const r of [ring, other]) {
      expect((await verifyAccessToken(r, ordinary.token, clock.now())).sub).toBe('u');
      expect((await verifyAccessToken(r, elevated.token, clock.now())).elevatedUntil).not.toBeNull();
    }

    // The ordinary token expires on its own clock; the elevated one lives its hour on the old key.
    clock.set(ordinary.expiresAt);
    await expectRefusal(ring, ordinary.token, clock.now(), 'expired');
    clock.set(new Date(elevated.expiresAt.getTime() - 1000));
    expect((await verifyAccessToken(other, elevated.token, clock.now())).sub).toBe('u');

    // Past the old key's expires_at, nothing it signed is accepted, and it can be deleted.
    clock.set(new Date(row!.expires_at.getTime() + 1000));
    expect(await ring.verificationKey(first.kid)).toBeNull();
    const refusal = await refusalOf(other, elevated.token, clock.now());
    expect(['unknown_key', 'expired']).toContain(refusal.reason);
    expect(await ring.deleteExpiredKeys()).toBe(1);
    expect((await keyRows()).map((k) => k.kid)).toEqual([second.kid]);
    expect(
      (await verifyAccessToken(other, fresh.token, new Date(fresh.expiresAt.getTime() - 1000))).sub,
    ).toBe('u');
  });

  it('stops verifying a key deleted by hand once the cache time has passed', async () => {
    await reset();
    const clock = new TestClock();
    const ring = new KeyRing(pools[0]!, clock, testBox, { cacheTtlSeconds: 60 });
    const { token } = await signAccessToken(ring, { sub: 'u', sid: 's' }, clock.now());
    expect((await verifyAccessToken(ring, token, clock.now())).sub).toBe('u');
    await pools[1]!`delete from signing_keys`;
    clock.advance(61_000);
    await expectRefusal(ring, token, clock.now(), 'unknown_key');
  });
});

describe('options', () => {
  it.each([
    ['an access token longer than the longest', { accessTokenTtlSeconds: 7200, maxTokenTtlSeconds: 3600 }],
    ['a zero rotation period', { rotateAfterSeconds: 0 }],
    ['fractional seconds', { maxTokenTtlSeconds: 1.5 }],
    ['a negative cache time', { cacheTtlSeconds: -1 }],
  ])('refuses %s', (_name, options) => {
    expect(() => new KeyRing(pools[0]!, new TestClock(), testBox, options)).toThrow(RangeError);
  });

  it('refuses to sign a token that would outlive its key', async () => {
    const ring = new KeyRing(pools[0]!, new TestClock(), testBox);
    await expect(signAccessToken(ring, { sub: 'u', sid: 's', ttlSeconds: 3601 }, new Date())).rejects.toThrow(
      RangeError,
    );
  });
});

function decodeKid(token: string): unknown {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')).kid;
}

async function refusalOf(ring: KeyRing, token: string, now: Date): Promise<AccessTokenError> {
  try {
    await verifyAccessToken(ring, token, now);
  } catch (err) {
    if (err instanceof AccessTokenError) return err;
    throw err;
  }
  throw new Error('the token was accepted');
}

async function expectRefusal(ring: KeyRing, token: string, now: Date, reason: AccessTokenError['reason']) {
  expect((await refusalOf(ring, token, now)).reason).toBe(reason);
}
