// `npm run admin` as an operator runs it: a child process with the environment of `npm start`, against
// DATABASE_URL, and against the embedded database of DATA_DIR while the server runs and while it does not.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_PERMISSIONS } from '../../server/src/authz/system-permissions.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn, newAccount, signUp, uniqueEmail } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { serverArgs } from '../support/program.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function admin(args: string[], env: Record<string, string>): Promise<Run> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.DATA_DIR;
  const child = spawn(process.execPath, [...(await serverArgs('scripts/admin.ts')), ...args], {
    env: { ...base, NODE_ENV: 'test', ...env },
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

const permissionsOf = async (baseUrl: string, token: string) =>
  (await createClient({ baseUrl, token, retries: 0 }).meGet()).system_permissions;

describe('with DATABASE_URL', () => {
  let app: TestApp;
  let smtp: TestSmtp;
  let env: Record<string, string>;
  let password: string;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
    env = { DATABASE_URL: app.databaseUrl };
    password = decodeURIComponent(new URL(app.databaseUrl).password);
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  const events = (userId: string) =>
    app.sql<
      {
        action: string;
        organization_id: string | null;
        target_type: string;
        details: unknown;
        request_id: string | null;
      }[]
    >`
      select action, organization_id, target_type, details, request_id from platform_events
      where target_id = ${userId} order by created_at, action`;

  it(
    'grants, says when nothing changes, grants all, revokes, and GET /me shows it',
    { timeout: 60_000 },
    async () => {
      const { email, session } = await newAccount(app, smtp, 'staff');
      const userId = session.user.id;
      expect(await permissionsOf(app.baseUrl, session.token)).toEqual([]);

      const granted = await admin(
        ['grant', '--email', email.toUpperCase(), '--permission', 'view_all_orders', 'manage_users'],
        env,
      );
      expect(granted).toMatchObject({ code: 0, stderr: '' });
      expect(granted.stdout).toBe(
        `granted manage_users, view_all_orders to ${email} (holds: manage_users, view_all_orders)\n`,
      );
      expect(await permissionsOf(app.baseUrl, session.token)).toEqual(['manage_users', 'view_all_orders']);
      expect(await events(userId)).toEqual([
        {
          action: 'staff.permissions_granted',
          organization_id: null,
          target_type: 'user',
          details: { permissions: ['manage_users', 'view_all_orders'], operator: userInfo().username },
          request_id: null,
        },
      ]);

      const again = await admin(['grant', '--email', email, '--permission', 'manage_users'], env);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`${email} already holds manage_users: nothing changed`);
      expect(await events(userId)).toHaveLength(1);

      const all = await admin(['grant', '--email', email, '--permission', 'all'], env);
      expect(all.code).toBe(0);
      expect(all.stdout).toContain(
        'granted manage_services, manage_billing, manage_public_content, manage_applications to',
      );
      expect(await permissionsOf(app.baseUrl, session.token)).toEqual([...SYSTEM_PERMISSIONS]);

      const revoked = await admin(['revoke', '--email', email, '--permission', 'manage_billing'], env);
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toContain(`revoked manage_billing from ${email}`);
      const notHeld = await admin(['revoke', '--email', email, '--permission', 'manage_billing'], env);
      expect(notHeld.code).toBe(0);
      expect(notHeld.stdout).toContain(`${email} does not hold manage_billing: nothing changed`);
      expect(await permissionsOf(app.baseUrl, session.token)).toEqual(
        SYSTEM_PERMISSIONS.filter((p) => p !== 'manage_billing'),
      );

      const table = await admin(['users'], env);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^EMAIL\s+NAME\s+PERMISSIONS\n/);
      expect(table.stdout).toMatch(
        new RegExp(
          `${email.replace(/[.]/g, '\\.')}\\s+Test Person\\s+manage_users, view_all_orders, manage_services,`,
        ),
      );
      const listed = JSON.parse((await admin(['users', '--json'], env)).stdout) as {
        id: string;
        email: string;
        permissions: string[];
      }[];
      expect(listed.find((s) => s.email === email)).toMatchObject({
        id: userId,
        permissions: SYSTEM_PERMISSIONS.filter((p) => p !== 'manage_billing'),
      });

      const none = await admin(['revoke', '--email', email, '--permission', 'all'], env);
      expect(none.code).toBe(0);
      expect(none.stdout).toContain(`from ${email} (holds: no system permissions)`);
      expect(await permissionsOf(app.baseUrl, session.token)).toEqual([]);
      const after = JSON.parse((await admin(['users', '--json'], env)).stdout) as { email: string }[];
      expect(after.map((s) => s.email)).not.toContain(email);
      expect((await events(userId)).map((e) => e.action)).toEqual([
        'staff.permissions_granted',
        'staff.permissions_granted',
        'staff.permissions_revoked',
        'staff.permissions_revoked',
      ]);
      for (const run of [granted, again, all, revoked, notHeld, table, none])
        expect(run.stdout + run.stderr).not.toContain(password);
    },
  );

  it(
    'refuses unknown and deleted addresses, unknown permissions and missing arguments',
    // Ten runs of the command, each a process that loads the operator command; CI at load 10 took 60 s.
    { timeout: 120_000 },
    async () => {
      const unknown = await admin(
        ['grant', '--email', 'nobody@example.test', '--permission', 'manage_users'],
        env,
      );
      expect(unknown).toEqual({
        code: 1,
        stdout: '',
        stderr: 'admin: no account with the address nobody@example.test\n',
      });

      const { email, session } = await newAccount(app, smtp, 'gone');
      await app.sql`update users set deleted_at = now() where id = ${session.user.id}`;
      const deleted = await admin(['grant', '--email', email, '--permission', 'all'], env);
      expect(deleted.code).toBe(1);
      expect(deleted.stderr).toContain(`no account with the address ${email}`);

      const badPermission = await admin(
        ['grant', '--email', email, '--permission', 'manage_users', 'root'],
        env,
      );
      expect(badPermission.code).toBe(2);
      expect(badPermission.stderr).toContain(
        `unknown permission "root" (valid: ${SYSTEM_PERMISSIONS.join(', ')}, or all)`,
      );

      // Usage errors are independent runs: side by side.
      const usage = [
        [],
        ['grant'],
        ['grant', '--email', email],
        ['revoke', '--permission', 'all'],
        ['grant', '--email'],
        ['promote'],
        ['users', '--yaml'],
      ];
      const runs = await Promise.all(usage.map((args) => admin(args, env)));
      for (const [i, run] of runs.entries()) {
        expect(run.code, usage[i]!.join(' ')).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/^admin: /);
        expect(run.stderr).not.toMatch(/\n\s+at /);
      }
      expect((await admin(['--help'], env)).code).toBe(0);
    },
  );

  it('names an unreachable database without its password or a stack', async () => {
    const run = await admin(['users'], {
      DATABASE_URL: 'postgres://postgres:hunter2secret@127.0.0.1:1/postgres',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'cannot reach the database of DATABASE_URL (postgres://postgres:***@127.0.0.1:1/postgres)',
    );
    expect(run.stderr).not.toContain('hunter2secret');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('with the embedded database of DATA_DIR', () => {
  let dataDir: string;
  let smtp: TestSmtp;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-admin-'));
    smtp = await startTestSmtp();
  });
  afterAll(async () => {
    await smtp.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function startServer(): Promise<{ baseUrl: string; stop(): Promise<number | null> }> {
    const child = spawn(process.execPath, await serverArgs(), {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        SMTP_URL: smtp.url,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /API\s+(http:\/\/[\d.:]+)\/api\/v2/.exec(out);
        if (!m) return;
        clearTimeout(timer);
        resolve({
          baseUrl: m[1]!,
          stop: () => {
            const exited = new Promise<number | null>((r) => child.once('exit', r));
            child.kill('SIGTERM');
            return exited;
          },
        });
      });
      child.on('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
    });
  }

  it(
    'grants while `npm start` runs, and lists staff with the server stopped',
    { timeout: 180_000 },
    async () => {
      const missing = await admin(['users'], { DATA_DIR: dataDir });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(`no embedded database in ${join(dataDir, 'postgres')}`);

      const server = await startServer();
      const email = uniqueEmail('embedded');
      const password = 'correct horse battery staple';
      // signUp and logIn read only the base URL of the app they are given.
      const target = { baseUrl: server.baseUrl } as TestApp;
      await signUp(target, smtp, email, password);
      const session = await logIn(target, smtp, email, password);

      const granted = await admin(
        ['grant', '--email', email, '--permission', 'manage_users', 'manage_billing'],
        { DATA_DIR: dataDir },
      );
      expect(granted).toMatchObject({ code: 0, stderr: '' });
      expect(granted.stdout).toContain(`granted manage_users, manage_billing to ${email}`);
      expect(await permissionsOf(server.baseUrl, session.token)).toEqual(['manage_users', 'manage_billing']);
      expect(await server.stop()).toBe(0);
      expect(existsSync(join(dataDir, 'postgres', 'pgdata', 'postmaster.pid'))).toBe(false);

      const listed = await admin(['users'], { DATA_DIR: dataDir });
      expect(listed.code).toBe(0);
      expect(listed.stderr).toContain('the server is not running: starting the embedded database');
      expect(listed.stdout).toContain(email);
      expect(listed.stdout).toContain('manage_users, manage_billing');
      expect(listed.stdout).toContain('1 staff member');
      // The cluster the command started is stopped again, so `npm start` can take the directory.
      expect(existsSync(join(dataDir, 'postgres', 'pgdata', 'postmaster.pid'))).toBe(false);
      const dbPassword = readFileSync(join(dataDir, 'postgres', 'password'), 'utf8').trim();
      for (const run of [granted, listed]) expect(run.stdout + run.stderr).not.toContain(dbPassword);

      const again = await startServer();
      expect(await permissionsOf(again.baseUrl, session.token)).toEqual(['manage_users', 'manage_billing']);
      expect(await again.stop()).toBe(0);
    },
  );
});
