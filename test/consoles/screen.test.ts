// A machine's screen through the edge gateway (document 2 §2 "Console tickets", §3 "screen hold", §4
// "Consoles and tickets"; DECISIONS.md §6 "Screen"): the VPS's machine runs a real Xvnc (Debian's
// tigervnc-standalone-server), spoken to as RFB 3.8 by a `ws` client through the gateway, as noVNC
// does. The exclusive hold in PostgreSQL: 409 naming the holder, force, refresh and release, the race
// between parallel requests, and input from a watcher's socket dropped (read back from Xvnc's keyboard
// LEDs, which its holder's keys do toggle).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { openScreenSocket } from '@svcplatform/sdk';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { findProgram } from '../../server/src/substrate/local/programs.js';
import { waitUntil } from '../../server/src/substrate/local/proc.js';
import { ENCODING_LED_STATE, ENCODING_RAW, KEY, RfbClient } from './rfb.js';
import { closeOf, refusedStatus } from './sockets.js';

const hasXvnc = findProgram('Xvnc') !== null;

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let billing: Caller;
let orgId: string;
let vps: Provisioned;
const names: Record<string, string> = {};
const sockets: WebSocket[] = [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const staff = await staffMember(app, smtp, 'scr-staff', ['manage_services']);
  [owner, member, billing] = await Promise.all([
    signedIn(app, smtp, 'scr-owner'),
    signedIn(app, smtp, 'scr-member'),
    signedIn(app, smtp, 'scr-billing'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Screens', slug: `screens-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Machine' });
  // Names of their own, so that a holder_name says who.
  await owner.api.meUpdate({ body: { name: 'Ada Owner' } });
  await member.api.meUpdate({ body: { name: 'Max Member' } });
  for (const caller of [owner, member]) {
    const [row] = await app.sql<{ name: string }[]>`select name from users where id = ${caller.userId}`;
    names[caller.userId] = row!.name;
  }
  // The machine's agent starts Xvnc as the machine starts; it says where once it accepts clients.
  if (hasXvnc) {
    const endpoint = join(app.substrateDir, 'units', vps.primaryResourceId, 'screen.json');
    expect(await waitUntil(() => existsSync(endpoint), 30_000)).toBe(true);
  }
}, 120_000);
afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await app?.close();
  await smtp?.close();
});

const path = () => ({ id: vps.serviceInstanceId, resource_id: vps.primaryResourceId });
const ticketOf = (caller: Caller, force?: boolean) =>
  caller.api.screenTicketCreate({ path: path(), query: force === undefined ? {} : { force } });
const refresh = (caller: Caller, sessionId: string) =>
  caller.api.screenHoldRefresh({ path: path(), body: { session_id: sessionId } });
const release = (caller: Caller, sessionId: string) =>
  caller.api.screenHoldRelease({ path: path(), query: { session_id: sessionId } });

/** The hold's row as stored (null: never taken). */
async function holdRow() {
  const [row] = await app.sql<{ session_digest: string; user_id: string; expires_at: Date }[]>`
    select session_digest, user_id, expires_at from screen_holds where resource_id = ${vps.primaryResourceId}`;
  return row ?? null;
}
const screenTickets = async () =>
  (await app.sql`select id from gateway_tickets where purpose = 'screen'`).length;

/** Lets every hold lapse: the next ticket is taken without force. */
function lapse(): void {
  app.clock.advance(61_000);
}

async function openScreen(ticket: { url: string; protocols: string[] }): Promise<RfbClient> {
  const ws = await openScreenSocket(ticket);
  sockets.push(ws);
  return new RfbClient(ws);
}

describe.skipIf(!hasXvnc)('the screen ticket', () => {
  it('names the session and hold, asks for the binary subprotocol, and is audited before the answer', async () => {
    lapse();
    const before = app.clock.now().getTime();
    const ticket = await ticketOf(owner);
    expect(ticket.protocols).toEqual(['binary']);
    expect(ticket.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/screen\?ticket=[\w.-]+$/);
    expect(ticket.session_id).toMatch(/^[\w-]{32}$/);
    expect(new Date(ticket.expires_at).getTime() - before).toBe(60_000);
    expect(new Date(ticket.hold_expires_at).getTime() - before).toBe(60_000);
    const row = await holdRow();
    expect(row?.user_id).toBe(owner.userId);
    // Only the session's digest is stored.
    expect(row?.session_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.session_digest).not.toContain(ticket.session_id);
    const entries = await auditEntries(app, orgId);
    expect(
      entries.some((e) => e.action === 'screen.ticket_issued' && e.target_id === vps.primaryResourceId),
    ).toBe(true);
  });

  it('opens the machine display as RFB 3.8: version, security None, ServerInit, a framebuffer update', async () => {
    lapse();
    const rfb = await openScreen(await ticketOf(owner));
    const init = await rfb.handshake();
    expect(init.version).toBe('RFB 003.008\n');
    expect(init.securityTypes).toEqual([1]);
    expect(init.securityResult).toBe(0);
    expect([init.width, init.height]).toEqual([1024, 768]);
    expect(init.bitsPerPixel).toBe(32);
    expect(init.name).toBe(`machine ${vps.primaryResourceId}`);
    rfb.setEncodings([ENCODING_RAW]);
    rfb.requestUpdate(false, 0, 0, 64, 48);
    const rects = await rfb.readUpdate();
    const raw = rects.filter((r) => r.encoding === ENCODING_RAW);
    expect(raw.reduce((n, r) => n + r.width * r.height, 0)).toBe(64 * 48);
    for (const r of raw) expect(r.data.length).toBe(r.width * r.height * 4);
    rfb.ws.close();
  });

  it('is spent at the first upgrade and refused for another purpose', async () => {
    lapse();
    const ticket = await ticketOf(owner);
    const rfb = await openScreen(ticket);
    await rfb.handshake();
    expect(await refusedStatus(ticket.url, { protocols: ['binary'] })).toBe(401);
    expect(await refusedStatus(ticket.url.replace('/screen?', '/console?'))).toBe(401);
    rfb.ws.close();
  });

  it('closes a client that does not speak RFB 3.8 with 1002', async () => {
    lapse();
    const rfb = await openScreen(await ticketOf(owner));
    await rfb.take(12);
    const closed = closeOf(rfb.ws);
    rfb.send(Buffer.from('RFB 003.003\n', 'latin1'));
    expect((await closed).code).toBe(1002);
  });
});

describe.skipIf(!hasXvnc)('the exclusive hold', () => {
  it('answers 409 screen-held naming the holder, and hands out nothing', async () => {
    lapse();
    const held = await ticketOf(owner);
    const row = await holdRow();
    const [tickets, audit] = [await screenTickets(), (await auditEntries(app, orgId)).length];
    const err = await refusal(ticketOf(member));
    expect([err.status, err.code]).toEqual([409, 'screen-held']);
    expect(err.details).toEqual({ holder_name: 'Ada Owner' });
    // The holder's own second ticket without force is a 409 too.
    expect(await outcome(ticketOf(owner, false))).toEqual([409, 'screen-held']);
    expect(await holdRow()).toEqual(row);
    expect(await screenTickets()).toBe(tickets);
    expect((await auditEntries(app, orgId)).length).toBe(audit);
    expect(await refresh(owner, held.session_id)).toMatchObject({ held: true });
  });

  it('force takes it over: the old socket stays open, the old holder refresh answers held false naming the new one', async () => {
    lapse();
    const first = await ticketOf(owner);
    const old = await openScreen(first);
    await old.handshake();
    old.setEncodings([ENCODING_RAW]);
    const taken = await ticketOf(member, true);
    expect((await holdRow())?.user_id).toBe(member.userId);
    const fresh = await openScreen(taken);
    await fresh.handshake();
    // The previous holder still watches.
    old.requestUpdate(false, 0, 0, 8, 8);
    expect((await old.readUpdate()).length).toBeGreaterThan(0);
    expect(await refresh(owner, first.session_id)).toEqual({
      held: false,
      holder_name: names[member.userId],
    });
    expect(await release(owner, first.session_id)).toEqual({ released: false });
    expect((await holdRow())?.user_id).toBe(member.userId);
    expect(old.ws.readyState).toBe(old.ws.OPEN);
    old.ws.close();
    fresh.ws.close();
  });

  it('refresh extends a held hold by 60 s from now, and re-takes a lapsed one nobody claimed', async () => {
    lapse();
    const ticket = await ticketOf(owner);
    app.clock.advance(30_000);
    const extended = await refresh(owner, ticket.session_id);
    expect(extended).toEqual({ held: true, expires_at: new Date(app.clock.now().getTime() + 60_000).toISOString() });
    lapse();
    const retaken = await refresh(owner, ticket.session_id);
    expect(retaken.held).toBe(true);
    expect(await outcome(ticketOf(member))).toEqual([409, 'screen-held']);
    // Another user's refresh with the same session takes nothing.
    expect(await refresh(member, ticket.session_id)).toEqual({ held: false, holder_name: names[owner.userId] });
    expect(await refresh(member, 'never-minted')).toEqual({ held: false, holder_name: names[owner.userId] });
  });

  it('a lapsed hold is taken without force, and its old session cannot re-take it then', async () => {
    lapse();
    const first = await ticketOf(owner);
    lapse();
    const second = await ticketOf(member);
    expect(await refresh(owner, first.session_id)).toEqual({ held: false, holder_name: names[member.userId] });
    expect(await refresh(member, second.session_id)).toMatchObject({ held: true });
  });

  it('release is best effort and closes no socket', async () => {
    lapse();
    const ticket = await ticketOf(owner);
    const rfb = await openScreen(ticket);
    await rfb.handshake();
    rfb.setEncodings([ENCODING_RAW]);
    expect(await release(owner, ticket.session_id)).toEqual({ released: true });
    expect(await release(owner, ticket.session_id)).toEqual({ released: false });
    // Free now: taken without force.
    const next = await ticketOf(member);
    rfb.requestUpdate(false, 0, 0, 4, 4);
    expect((await rfb.readUpdate()).length).toBeGreaterThan(0);
    expect(rfb.ws.readyState).toBe(rfb.ws.OPEN);
    expect(await release(member, next.session_id)).toEqual({ released: true });
    // A released hold nobody claimed is re-taken by its session's refresh.
    expect(await refresh(member, next.session_id)).toMatchObject({ held: true });
    rfb.ws.close();
  });

  it('of parallel requests for a free screen exactly one gets it (each on its own database connection)', async () => {
    lapse();
    const callers = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? owner : member));
    const tickets = await screenTickets();
    const answers = await Promise.all(callers.map((c) => outcome(ticketOf(c))));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    expect(answers.filter((a) => a !== 'ok')).toEqual(Array(11).fill([409, 'screen-held']));
    expect(await screenTickets()).toBe(tickets + 1);
  });
});

describe.skipIf(!hasXvnc)('a watcher (not the holder)', () => {
  it("keeps watching, and its keys are dropped while the holder's go through", async () => {
    lapse();
    // The owner's ticket is taken over before its socket opens: that socket watches from its first byte.
    const watcherTicket = await ticketOf(owner);
    const holderTicket = await ticketOf(member, true);
    const watcher = await openScreen(watcherTicket);
    const holder = await openScreen(holderTicket);
    await watcher.handshake(false);
    await holder.handshake();
    holder.setEncodings([ENCODING_RAW, ENCODING_LED_STATE]);
    holder.requestUpdate(false, 0, 0, 16, 16);
    const start = await holder.nextLedState();

    // Caps Lock from the watcher, then a framebuffer update of its own: once that arrives, Xvnc has
    // read everything the watcher's socket sent before it.
    watcher.setEncodings([ENCODING_RAW]);
    watcher.key(KEY.capsLock);
    watcher.requestUpdate(false, 0, 0, 4, 4);
    expect((await watcher.readUpdate()).length).toBeGreaterThan(0);
    // Num Lock from the holder: the LEDs show its key and not the watcher's.
    holder.key(KEY.numLock);
    holder.requestUpdate(true, 0, 0, 16, 16);
    const afterNum = await holder.nextLedState();
    expect(afterNum).toBe(start ^ 2);
    // The holder's Caps Lock does reach the machine.
    holder.key(KEY.capsLock);
    holder.requestUpdate(true, 0, 0, 16, 16);
    expect(await holder.nextLedState()).toBe(start ^ 2 ^ 4);
    // Back as they were, for whoever looks next.
    holder.key(KEY.capsLock);
    holder.key(KEY.numLock);
    // The watcher's non-shared ClientInit disconnected nobody.
    expect(holder.ws.readyState).toBe(holder.ws.OPEN);
    expect(watcher.ws.readyState).toBe(watcher.ws.OPEN);
    watcher.ws.close();
    holder.ws.close();
  });
});

describe.skipIf(!hasXvnc)('refusals', () => {
  it('is the 404 of an unknown id for strangers to the service, a volume, an unknown id; nothing changes', async () => {
    lapse();
    const held = await ticketOf(member);
    const row = await holdRow();
    const tickets = await screenTickets();
    const unknown = await outcome(
      owner.api.screenTicketCreate({ path: { id: randomUUID(), resource_id: vps.primaryResourceId }, query: {} }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    // One call at a time: a refusal made before it is awaited would be an unhandled rejection meanwhile.
    expect(await outcome(ticketOf(billing, true))).toEqual(unknown);
    expect(await outcome(refresh(billing, held.session_id))).toEqual(unknown);
    expect(await outcome(release(billing, held.session_id))).toEqual(unknown);
    expect(
      await outcome(
        owner.api.screenTicketCreate({
          path: { id: vps.serviceInstanceId, resource_id: vps.volumeResourceId },
          query: { force: true },
        }),
      ),
    ).toEqual(unknown);
    expect(
      await outcome(
        owner.api.screenHoldRelease({
          path: { id: vps.serviceInstanceId, resource_id: vps.volumeResourceId },
          query: { session_id: held.session_id },
        }),
      ),
    ).toEqual(unknown);
    expect(await holdRow()).toEqual(row);
    expect(await screenTickets()).toBe(tickets);
  });
});
