// svcctl screen against the real server, its gateway and the machine's real Xvnc: the printed URL opens
// as RFB 3.8 through the gateway, the hold is taken while svcctl runs (a second svcctl without --force
// exits 6 naming the holder), and Ctrl-C (SIGINT) releases it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openScreenSocket } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RfbClient } from '../../../test/consoles/rfb.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { findProgram } from '../../../server/src/substrate/local/programs.js';
import { waitUntil } from '../../../server/src/substrate/local/proc.js';
import { ExitCode } from '../../src/exit-codes.js';
import { CLI_BIN, ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';
import { runCli, type CliRun } from '../support/run-cli.js';

const hasXvnc = findProgram('Xvnc') !== null;
let app: TestApp;
let smtp: TestSmtp;
let home: CliServiceOwner['home'];
let vps: Provisioned;
let userId: string;

beforeAll(async () => {
  if (!hasXvnc) return;
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const owner = await cliServiceOwner(app, smtp, 'scr-cli', {
    name: 'Box',
    project: { name: 'Machines', slug: 'machines' },
  });
  ({ home, userId, service: vps } = owner);
  const endpoint = join(app.substrateDir, 'units', vps.primaryResourceId, 'screen.json');
  expect(await waitUntil(() => existsSync(endpoint), 30_000)).toBe(true);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const env = () => ({ ...home, SVCCTL_BASE_URL: app.baseUrl });
const svcctl = (args: string[], run: CliRun = {}) => runCli(args, { ...run, env: { ...env(), ...run.env } });
const hold = async () => {
  const [row] = await app.sql<{ user_id: string; expires_at: Date }[]>`
    select user_id, expires_at from screen_holds where resource_id = ${vps.primaryResourceId}`;
  return row ?? null;
};

describe.skipIf(!hasXvnc)('svcctl screen', () => {
  it('prints the URL, holds the screen while it runs, and releases it on Ctrl-C', async () => {
    const child = spawn(process.execPath, [CLI_BIN, 'screen', vps.serviceInstanceId, vps.primaryResourceId], {
      env: { PATH: process.env.PATH ?? '', ...env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(await waitUntil(() => stderr.includes('Ctrl-C releases it'), 60_000)).toBe(true);
    const url = stdout.trim();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/screen\?ticket=/);
    expect(stderr).toContain('vnc.html?host=127.0.0.1&port=');

    // The URL is what noVNC opens: RFB 3.8 through the gateway.
    const rfb = new RfbClient(await openScreenSocket({ url, protocols: ['binary'] }));
    expect((await rfb.handshake()).version).toBe('RFB 003.008\n');
    rfb.ws.close();

    const held = await hold();
    expect(held?.user_id).toBe(userId);
    expect(held!.expires_at.getTime()).toBeGreaterThan(app.clock.now().getTime());
    const second = await svcctl(['screen', vps.serviceInstanceId, vps.primaryResourceId]);
    expect(second.code).toBe(ExitCode.conflict);
    expect(second.stderr).toMatch(/the screen is held by .+; --force takes it over/);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toContain('Released the screen.');
    expect((await hold())!.expires_at.getTime()).toBeLessThanOrEqual(app.clock.now().getTime());
  });
});
