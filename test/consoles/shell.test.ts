// A shell through the edge gateway (document 2 §4 "Consoles and tickets", §8 "shell size"; DECISIONS.md
// §6 "Shell"): a real PTY running bash under bubblewrap, confined to the unit's volume, spoken to by a
// real `ws` client with the svc-pty-v1 subprotocol. Sizes, resizes (read back with `stty size`), the
// exit code, the session's end, single use and the ten-second deadline, the idle and maximum lengths on
// a second gateway of the same database, and no process left behind.
import { readFile } from 'node:fs/promises';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { openShellSocket, resizeShell, type ShellControl } from '@svcplatform/sdk';
import { createGateway, type Gateway } from '../../server/src/gateway/server.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { closeOf, refusedStatus } from './sockets.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let orgId: string;
let game: Provisioned;
let arena: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const staff = await staffMember(app, smtp, 'sh-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'sh-owner');
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Shells', slug: `shells-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [game, arena] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' }),
    provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' }),
  ]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const ticketOf = (caller: Caller, query: { container?: string } = {}, resourceId = game.primaryResourceId) =>
  caller.api.shellTicketCreate({ path: { id: game.serviceInstanceId, resource_id: resourceId }, query });
const volumeDir = () => join(app.substrateDir, 'volumes', game.volumeResourceId);

/** Processes whose command line names `needle` (a shell's bwrap names the volume it binds). */
/** What a shell session runs, as the host's /proc names it (the launcher, the shell, what it starts). */
const SHELL_PROGRAMS = new Set(['unshare', 'setpriv', 'nsenter', 'bash', 'sh', 'sleep']);

/**
 * The live processes of shell sessions in the unit whose volume this is: those running as one of its
 * host ids (the volume's root belongs to the first of them; substrate/local/sandbox/idmap.ts), read from
 * the host's /proc, that are a shell's (the unit's own program may start helpers of its own meanwhile).
 */
function unitProcesses(volume: string): number[] {
  const base = statSync(volume).uid;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'latin1');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '';
      if (/^State:\s+Z/m.test(status) || !SHELL_PROGRAMS.has(name)) continue;
      if (uid >= base && uid < base + 65_536) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Terminal bytes and control frames of a shell socket. */
class ShellReader {
  readonly controls: ShellControl[] = [];
  #text = '';
  readonly #waiters = new Set<() => void>();
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.#text += data.toString('utf8');
      else this.controls.push(JSON.parse(data.toString('utf8')) as ShellControl);
      for (const wake of this.#waiters) wake();
    });
  }
  get text(): string {
    return this.#text;
  }
  waitFor(test: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.#text.match(test);
        if (!match) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(match);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`${test} did not arrive; got: ${JSON.stringify(this.#text.slice(-500))}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }
  type(line: string): void {
    this.ws.send(Buffer.from(`${line}\n`));
  }
}

describe('the shell ticket', () => {
  it('names the container and the shells tried, redeemable for 10 s, audited before the answer', async () => {
    const ticket = await ticketOf(owner);
    expect(ticket.container).toBe('main');
    expect(ticket.shells).toEqual(['bash', 'sh']);
    expect(ticket.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/shell\?ticket=[\w.-]+$/);
    expect(new Date(ticket.expires_at).getTime() - app.clock.now().getTime()).toBe(10_000);
    const entries = await auditEntries(app, orgId);
    expect(
      entries.some((e) => e.action === 'shell.ticket_issued' && e.target_id === game.primaryResourceId),
    ).toBe(true);
  });

  it('is the 404 of an unknown id for an unknown container, a product without a shell and a volume', async () => {
    const count = async () => (await app.sql`select 1 from gateway_tickets where purpose = 'shell'`).length;
    const rows = await count();
    const unknown = await outcome(
      owner.api.shellTicketCreate({ path: { id: randomUUID(), resource_id: game.primaryResourceId } }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    expect(await outcome(ticketOf(owner, { container: 'sidecar' }))).toEqual(unknown);
    expect(await outcome(ticketOf(owner, {}, game.volumeResourceId))).toEqual(unknown);
    expect(
      await outcome(
        owner.api.shellTicketCreate({
          path: { id: arena.serviceInstanceId, resource_id: arena.primaryResourceId },
        }),
      ),
    ).toEqual(unknown);
    expect(await count()).toBe(rows);
  });
});

describe('the shell socket', () => {
  it('is a PTY of the asked size, resized, confined to the volume, ending with the exit code', async () => {
    const before = unitProcesses(volumeDir()).length;
    const shell = new ShellReader(
      await owner.api.openShell(game.serviceInstanceId, game.primaryResourceId, { columns: 80, rows: 24 }),
    );
    const closed = closeOf(shell.ws);
    shell.type('stty size');
    await shell.waitFor(/^24 80\r?$/m);
    resizeShell(shell.ws, 132, 50);
    shell.type('stty size');
    await shell.waitFor(/^50 132\r?$/m);
    // The volume is the root directory: what the shell writes at / lands in it; the host is not there.
    const mark = `m${randomUUID().slice(0, 8)}`;
    shell.type(
      `echo ${mark} > /from-shell.txt; test -e ${process.cwd()} && echo HOST-VISIBLE || echo host-hidden-${mark}`,
    );
    await shell.waitFor(new RegExp(`^host-hidden-${mark}`, 'm'));
    expect((await readFile(join(volumeDir(), 'from-shell.txt'), 'utf8')).trim()).toBe(mark);
    // Only the sandbox's own processes, and none of the platform's environment.
    shell.type(
      `echo procs-$(ls /proc | grep -c '^[0-9]') env-$(env | grep -c -i -e DATABASE -e ENCRYPTION -e SVC_)`,
    );
    const [, procs, env] = (await shell.waitFor(/^procs-(\d+) env-(\d+)/m)) as RegExpMatchArray;
    expect(Number(procs)).toBeLessThanOrEqual(6);
    expect(Number(env)).toBe(0);
    shell.type('exit 3');
    const { code } = await closed;
    expect(code).toBe(1000);
    expect(shell.controls).toEqual([
      { type: 'exit', code: 3 },
      { type: 'session_end', reason: 'exited' },
    ]);
    await expect.poll(() => unitProcesses(volumeDir()).length, { timeout: 5_000 }).toBe(before);
  });

  it('ends the session on a resize out of range, and leaves no process when the client goes', async () => {
    const before = unitProcesses(volumeDir()).length;
    const shell = new ShellReader(await owner.api.openShell(game.serviceInstanceId, game.primaryResourceId));
    const closed = closeOf(shell.ws);
    shell.type('stty size');
    await shell.waitFor(/^24 80\r?$/m);
    resizeShell(shell.ws, 501, 24);
    expect((await closed).code).toBe(4004);
    expect(shell.controls).toEqual([{ type: 'session_end', reason: 'invalid_control' }]);
    await expect.poll(() => unitProcesses(volumeDir()).length, { timeout: 5_000 }).toBe(before);

    const gone = new ShellReader(await owner.api.openShell(game.serviceInstanceId, game.primaryResourceId));
    gone.type('sleep 600');
    await expect.poll(() => unitProcesses(volumeDir()).length, { timeout: 5_000 }).toBeGreaterThan(before);
    gone.ws.terminate();
    await expect.poll(() => unitProcesses(volumeDir()).length, { timeout: 5_000 }).toBe(before);
  });

  it('refuses a size out of range or a missing subprotocol without spending the ticket; spent once; late refused', async () => {
    const { url } = await ticketOf(owner);
    const ok = { protocols: ['svc-pty-v1'] };
    expect(await refusedStatus(`${url}&columns=0&rows=24`, ok)).toBe(400);
    expect(await refusedStatus(`${url}&columns=80&rows=201`, ok)).toBe(400);
    expect(await refusedStatus(`${url}&columns=80`, ok)).toBe(400);
    expect(await refusedStatus(`${url}&columns=80&rows=24`)).toBe(400);
    const ws = await openShellSocket(url, { columns: 500, rows: 200 });
    expect(ws.protocol).toBe('svc-pty-v1');
    expect(await refusedStatus(`${url}&columns=80&rows=24`, ok)).toBe(401);
    const closed = closeOf(ws);
    ws.close();
    await closed;

    const late = await ticketOf(owner);
    app.clock.advance(11_000);
    try {
      expect(await refusedStatus(`${late.url}&columns=80&rows=24`, ok)).toBe(401);
    } finally {
      app.clock.advance(-11_000);
    }
  });

  describe('on a second gateway of the same database, with short lengths', () => {
    let second: Gateway;
    let base: string;
    beforeAll(async () => {
      second = createGateway({
        sql: app.sql,
        config: { ...app.config, shellIdleSeconds: 1, shellMaxSeconds: 3 },
        log: pino({ level: 'silent' }),
        clock: app.clock,
        box: app.box,
        substrate: app.substrate!,
      });
      second.server.listen(0, '127.0.0.1');
      await once(second.server, 'listening');
      base = `ws://127.0.0.1:${(second.server.address() as AddressInfo).port}`;
      await second.start(base.replace('ws:', 'http:'));
    });
    afterAll(async () => second?.close());
    const onSecond = (url: string) => `${base}${url.slice(url.indexOf('/shell'))}`;

    let before = 0;
    beforeEach(() => {
      before = unitProcesses(volumeDir()).length;
    });
    // No sandbox outlives its session, whichever way it ended (one an earlier test left ending may go
    // meanwhile: fewer is fine, more is a leak).
    afterEach(async () => {
      await expect
        .poll(() => unitProcesses(volumeDir()).length, { timeout: 5_000 })
        .toBeLessThanOrEqual(before);
    });

    it('ends an idle shell after SHELL_IDLE_SECONDS', async () => {
      const shell = new ShellReader(await openShellSocket(onSecond((await ticketOf(owner)).url)));
      expect((await closeOf(shell.ws)).code).toBe(4002);
      expect(shell.controls).toEqual([{ type: 'session_end', reason: 'idle' }]);
    });

    it('ends a busy shell after SHELL_MAX_SECONDS', async () => {
      const shell = new ShellReader(await openShellSocket(onSecond((await ticketOf(owner)).url)));
      const closed = closeOf(shell.ws);
      const typing = setInterval(() => shell.type('true'), 300);
      try {
        expect((await closed).code).toBe(4003);
      } finally {
        clearInterval(typing);
      }
      expect(shell.controls).toEqual([{ type: 'session_end', reason: 'max_length' }]);
    });
  });
});

describe('a stopped service', () => {
  it('has no console or shell to attach: 404 saying to start it, nothing minted; an open shell ends', async () => {
    const open = new ShellReader(await owner.api.openShell(game.serviceInstanceId, game.primaryResourceId));
    const ended = closeOf(open.ws);
    const { operation_id } = await owner.api.serviceInstancePower({
      path: { id: game.serviceInstanceId },
      body: { action: 'stop' },
    });
    expect((await awaitOperation(owner.api, game.serviceInstanceId, operation_id, 60_000)).status).toBe(
      'succeeded',
    );
    const rows = (await app.sql`select 1 from gateway_tickets`).length;
    // One call at a time: a refusal made before it is awaited would be an unhandled rejection meanwhile.
    for (const refused of [
      () => ticketOf(owner),
      () =>
        owner.api.consoleTicketCreate({
          path: { id: game.serviceInstanceId, resource_id: game.primaryResourceId },
        }),
    ]) {
      const err = await refusal(refused());
      expect([err.status, err.code]).toEqual([404, 'not-found']);
      expect(err.detail).toMatch(/is stopped.*Start it first/);
    }
    expect((await app.sql`select 1 from gateway_tickets`).length).toBe(rows);
    // The unit stopped: its shell went with it.
    expect((await ended).code).toBe(1000);
    expect(open.controls).toEqual([{ type: 'session_end', reason: 'stopped' }]);
  }, 120_000);
});
