// `npm run admin -- local-ca`: prints the CA certificate of DATA_DIR (made there if missing), the same
// one every time, without touching a database.
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueLocalCertificate } from '../../server/src/certificates/local-ca.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'admin-ca-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // No database is reachable: the command must not need one.
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

it('prints the CA certificate that signs the platform certificates, the same each time', async () => {
  const first = await admin(['local-ca']);
  expect(first).toMatchObject({ code: 0, stderr: '' });
  const ca = new X509Certificate(first.stdout);
  expect(ca.ca).toBe(true);
  expect(first.stdout).not.toContain('PRIVATE KEY');
  const second = await admin(['local-ca']);
  expect(second.stdout).toBe(first.stdout);
  const issued = await issueLocalCertificate({ dataDir, platformName: 'x' }, ['a.example.test']);
  expect(new X509Certificate(issued.certificatePem).checkIssued(ca)).toBe(true);

  const wrong = await admin(['local-ca', 'extra']);
  expect(wrong.code).toBe(2);
  expect(wrong.stdout).toBe('');
});
