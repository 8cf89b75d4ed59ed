// `npm start` as a user runs it: embedded PostgreSQL under DATA_DIR, migrations, listen; SIGTERM
// lets an in-flight request finish, then stops the database it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const dataDir = await mkdtemp(join(tmpdir(), 'svc-start-'));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

function start(): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: '', NODE_ENV: 'development', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
    child.stdout!.on('data', () => {
      const m = /API\s+(http:\/\/[\d.:]+)\/api\/v2/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: m[1]!, output: () => out });
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

it('starts, serves health, spec and docs, drains on SIGTERM and stops its database', { timeout: 120_000 }, async () => {
  const { child, base, output } = await start();
  expect(output()).toContain(`docs  ${base}/docs`);
  expect(output()).toContain(`spec  ${base}/api/v2/openapi.json`);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  const spec = (await (await fetch(`${base}/api/v2/openapi.json`)).json()) as { openapi: string };
  expect(spec.openapi).toBe('3.1.0');

  // An in-flight request: headers sent, body still to come when SIGTERM arrives.
  const body = JSON.stringify({ error_id: 'drain', message: 'in flight' });
  const answer = new Promise<number>((resolve, reject) => {
    const req = request(`${base}/api/v2/public/client-errors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(() => {
      child.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(10)), 300);
    }, 200);
  });
  const exit = exited(child);
  expect(await answer).toBe(204);
  expect(await exit).toBe(0);
  expect(existsSync(join(dataDir, 'postgres', 'pgdata', 'postmaster.pid'))).toBe(false);
});

it('starts again on the same DATA_DIR, keeping its data', { timeout: 120_000 }, async () => {
  const { child, base, output } = await start();
  expect(output()).not.toContain('migrations applied');
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  const exit = exited(child);
  child.kill('SIGINT');
  expect(await exit).toBe(0);
});

it('refuses bad configuration with a message naming each problem', { timeout: 30_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    env: { ...process.env, PORT: 'eighty', SOURCE_RATE_LIMIT_SCALE: '-1', DATABASE_URL: 'mysql://x' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  expect(await exited(child)).toBe(2);
  expect(err).toContain('PORT must be an integer');
  expect(err).toContain('SOURCE_RATE_LIMIT_SCALE must be a positive number');
  expect(err).toContain('DATABASE_URL must be a postgres: or postgresql: URL');
});

// As root the database runs as a system user; as an ordinary user it runs as that user. Both work.
it.skipIf(process.getuid?.() !== 0)('starts as an ordinary user too', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-nobody-'));
  await chmod(dir, 0o777);
  try {
    const child = spawn('su', ['nobody', '-s', '/bin/sh', '-c', `exec "${process.execPath}" --import tsx server/src/main.ts`], {
      env: { ...process.env, PORT: '0', DATA_DIR: join(dir, 'data'), HOME: dir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const base = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /API\s+(http:\/\/[\d.:]+)\/api\/v2/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
    });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const exit = exited(child);
    child.kill('SIGTERM');
    await exit;
  } finally {
    // The database's last writes (its postmaster lock, the stats file) can land while rm walks the tree.
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
});
