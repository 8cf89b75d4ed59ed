// Secrets at rest (DECISIONS.md §3): AES-256-GCM under ENCRYPTION_KEY with a key id, the key file of
// the embedded default, and the one-time sealing of secrets stored in the clear before.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import { loadConfig } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { upsertCaptchaConfig } from '../../server/src/features/public/store.js';
import { KEY_FILE, loadEncryptionKeys } from '../../server/src/secrets/key-file.js';
import { sealLegacySecrets } from '../../server/src/secrets/seal-legacy.js';
import { SealError, SecretBox } from '../../server/src/secrets/secret-box.js';
import { createTestDatabase, TestClock } from '../support/app.js';

describe('SecretBox', () => {
  const box = SecretBox.of([randomBytes(32)]);

  it('seals to a versioned, key-named value that opens to the plaintext', async () => {
    const sealed = await box.seal('totp', 'JBSWY3DPEHPK3PXP');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(await box.openText('totp', sealed)).toBe('JBSWY3DPEHPK3PXP');
    // A fresh IV every time.
    expect(await box.seal('totp', 'JBSWY3DPEHPK3PXP')).not.toBe(sealed);
  });

  it.each([
    ['another purpose', async (s: string) => box.open('captcha-secret', s)],
    ['a flipped byte', async (s: string) => box.open('totp', s.slice(0, -2) + (s.endsWith('A') ? 'BA' : 'AA'))],
    ['a truncated value', async (s: string) => box.open('totp', s.slice(0, 30))],
    ['another key', async (s: string) => SecretBox.of([randomBytes(32)]).open('totp', s)],
    ['no version', async (s: string) => box.open('totp', s.slice(3))],
  ])('refuses to open with %s', async (_why, open) => {
    const sealed = await box.seal('totp', 'secret');
    await expect(open(sealed)).rejects.toBeInstanceOf(SealError);
  });

  it('rotates: the first key seals, every configured key opens', async () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = await SecretBox.of([oldKey]).seal('signing-key', 'jwk');
    const rotated = SecretBox.of([newKey, oldKey]);
    expect(await rotated.openText('signing-key', before)).toBe('jwk');
    const after = await rotated.seal('signing-key', 'jwk');
    await expect(SecretBox.of([oldKey]).open('signing-key', after)).rejects.toBeInstanceOf(SealError);
  });
});

describe('ENCRYPTION_KEY and the key file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-key-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads comma-separated base64 keys and refuses malformed ones, naming each', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64url');
    expect(loadConfig({ ENCRYPTION_KEY: `${a}, ${b}` }).encryptionKeys).toHaveLength(2);
    expect(() => loadConfig({ ENCRYPTION_KEY: `${a},c2hvcnQ=` })).toThrow(/ENCRYPTION_KEY entry 2/);
  });

  it('is required in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/ENCRYPTION_KEY is required/);
  });

  it('makes one key file, mode 0600, even when many load at once', async () => {
    const config = { encryptionKeys: [], dataDir: join(dir, 'race') };
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadEncryptionKeys(config)));
    expect(new Set(keys.map((k) => k[0]!.kid)).size).toBe(1);
    const file = join(dir, 'race', KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
  });

  it('refuses a key file that does not hold a 32-byte key', async () => {
    await writeFile(join(dir, KEY_FILE), 'not a key\n');
    await expect(loadEncryptionKeys({ encryptionKeys: [], dataDir: dir })).rejects.toThrow(/32-byte key/);
  });
});

describe('secrets in the database', () => {
  let sql: Sql;
  let drop: () => Promise<void>;
  const box = SecretBox.of([randomBytes(32)]);
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    sql = connect(db.url, { max: 3 });
  });
  afterAll(async () => {
    await sql.end();
    await drop();
  });

  it('stores signing keys with the private half sealed', async () => {
    const ring = new KeyRing(sql, new TestClock(), box);
    const key = await ring.currentSigningKey();
    const [row] = await sql<{ private_jwk: unknown; private_jwk_sealed: string }[]>`
      select private_jwk, private_jwk_sealed from signing_keys where kid = ${key.kid}`;
    expect(row!.private_jwk).toBeNull();
    expect(row!.private_jwk_sealed).toMatch(/^v1\./);
    const jwk = JSON.parse(await box.openText('signing-key', row!.private_jwk_sealed)) as { d?: string };
    expect(jwk.d).toBeTypeOf('string');
  });

  it('seals secrets stored in the clear before, once, and keeps them usable', async () => {
    const clock = new TestClock(new Date('2026-12-01T00:00:00Z'));
    const maker = new KeyRing(sql, clock, box);
    const made = await maker.currentSigningKey();
    // As a row written before migration 0005 looked: the private JWK in the clear.
    const jwk = JSON.parse(await box.openText('signing-key', (await sql<{ s: string }[]>`
      select private_jwk_sealed as s from signing_keys where kid = ${made.kid}`)[0]!.s));
    await sql`update signing_keys set private_jwk = ${sql.json(jwk)}, private_jwk_sealed = null where kid = ${made.kid}`;
    await upsertCaptchaConfig(
      sql,
      { hostname: 'old.example', provider: 'hcaptcha', site_key: 'k', secret_sealed: null, verify_url: null, enabled: true, protected_actions: [] },
      clock.now(),
    );
    await sql`update captcha_configs set secret = 'legacy-captcha-secret' where hostname = 'old.example'`;

    expect(await sealLegacySecrets(sql, box)).toBe(2);
    expect(await sealLegacySecrets(sql, box)).toBe(0);
    const dump = JSON.stringify([
      await sql`select private_jwk, private_jwk_sealed from signing_keys`,
      await sql`select secret, secret_sealed from captcha_configs`,
    ]);
    expect(dump).not.toContain('legacy-captcha-secret');
    expect(dump).not.toContain(jwk.d);
    const [captcha] = await sql<{ secret_sealed: string }[]>`select secret_sealed from captcha_configs where hostname = 'old.example'`;
    expect(await box.openText('captcha-secret', captcha!.secret_sealed)).toBe('legacy-captcha-secret');
    // A fresh ring (another process) signs with the sealed key.
    const fresh = new KeyRing(sql, clock, box);
    expect((await fresh.currentSigningKey()).kid).toBe(made.kid);
  });
});
