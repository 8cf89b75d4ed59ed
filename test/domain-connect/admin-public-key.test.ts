// `npm run admin -- domain-connect public-key` as an operator runs it: the TXT records it prints carry
// the public half of DOMAIN_CONNECT_SIGNING_KEY (PEM text or a file), which checks a signature made with
// the private half; without a key it says so and exits 1.
import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

function admin(args: string[], env: Record<string, string>) {
  const base = { ...process.env };
  delete base.DOMAIN_CONNECT_SIGNING_KEY;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...base, NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dc-key-'));
  await writeFile(join(dir, 'key.pem'), pem, { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run admin -- domain-connect public-key', () => {
  it('prints TXT records whose key checks signatures of the signing key (PEM text or file)', async () => {
    for (const key of [pem, join(dir, 'key.pem')]) {
      const run = await admin(['domain-connect', 'public-key'], {
        DOMAIN_CONNECT_SIGNING_KEY: key,
        DOMAIN_CONNECT_SIGNING_KEY_ID: '_dckey2',
      });
      expect(run.code, run.stderr).toBe(0);
      const records = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('_dckey2 '))
        .map((l) => /^_dckey2 3600 IN TXT "p=(\d+),a=RS256,d=([A-Za-z0-9+/=]+)"$/.exec(l)!);
      expect(records.length).toBeGreaterThan(1);
      expect(records.map((m) => Number(m[1]))).toEqual(records.map((_, i) => i + 1));
      for (const m of records) expect(m[0].length - '_dckey2 3600 IN TXT ""'.length).toBeLessThanOrEqual(255);
      const der = Buffer.from(records.map((m) => m[2]).join(''), 'base64');
      const published = createPublicKey({ key: der, format: 'der', type: 'spki' });
      const data = Buffer.from('domain=example.com&host=play');
      expect(verify('sha256', data, published, sign('sha256', data, privateKey))).toBe(true);
      expect(run.stdout).not.toContain('PRIVATE');
    }
  });

  it('says the key is missing, or not one, and exits non-zero', async () => {
    const missing = await admin(['domain-connect', 'public-key'], {});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('DOMAIN_CONNECT_SIGNING_KEY is not set');
    expect(missing.stdout).toBe('');
    const bad = await admin(['domain-connect', 'public-key'], {
      DOMAIN_CONNECT_SIGNING_KEY: join(dir, 'absent.pem'),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('DOMAIN_CONNECT_SIGNING_KEY must be an RSA private key');
    const usage = await admin(['domain-connect', 'private-key'], {});
    expect(usage.code).toBe(2);
  });
});
