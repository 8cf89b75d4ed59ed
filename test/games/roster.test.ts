// The block game's roster and player actions through the API (document 2 §2 "Game roster", §4 "Game
// servers"; DECISIONS.md §6 "Games", "Audit", "Access"): a real Minecraft server (flying-squid) that a
// real client (a mineflayer bot) joins through the edge; every action is observed from the bot's side
// and in the roster, and every degraded status is reached: the server stopped, the unit gone behind the
// platform's back, nothing on the RCON port, a wrong password, a stall, a malformed packet, a reply with
// no list in it.
import { randomUUID } from 'node:crypto';
import mineflayer, { type Bot } from 'mineflayer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINECRAFT_VERSION, RCON_PORT } from '../../server/src/workloads/block/version.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { startRconPeer, type PeerBehaviour } from './rcon-peer.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let admin: Caller;
let member: Caller;
let stranger: Caller;
let orgId: string;
let game: Provisioned;
let web: Provisioned;
const bots: Bot[] = [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  const staff = await staffMember(app, smtp, 'ro-staff', ['manage_services']);
  [owner, admin, member, stranger] = await Promise.all([
    signedIn(app, smtp, 'ro-owner'),
    signedIn(app, smtp, 'ro-admin'),
    signedIn(app, smtp, 'ro-member'),
    signedIn(app, smtp, 'ro-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Roster', slug: `roster-${Date.now().toString(36)}` },
    })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: admin.userId, role: 'admin' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
  ).id;
  [game, web] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
  ]);
  await edge.caughtUp();
  // The server loads its world after the unit starts.
  const deadline = Date.now() + 60_000;
  while ((await roster(owner)).status !== 'ok') {
    if (Date.now() > deadline) throw new Error('the block game never answered RCON');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 180_000);
afterAll(async () => {
  for (const bot of bots) bot.quit();
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const roster = (c: Caller, include?: ('gamemode' | 'position')[], service = game) =>
  c.api.gameRosterGet({ path: { id: service.serviceInstanceId }, query: include ? { include } : {} });
type Action = Parameters<Caller['api']['gameActionRun']>[0]['body'];
const act = (c: Caller, body: Action, service = game) =>
  c.api.gameActionRun({ path: { id: service.serviceInstanceId }, body });

async function join(name: string): Promise<Bot> {
  const { allocations } = await owner.api.externalAccessGet({ path: { id: game.serviceInstanceId } });
  const primary = allocations.find((a) => a.is_primary)!;
  const bot = mineflayer.createBot({
    host: primary.external_ip,
    port: primary.external_port,
    username: name,
    version: MINECRAFT_VERSION,
    auth: 'offline',
  });
  bots.push(bot);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not join`)), 60_000);
    bot.once('spawn', () => {
      clearTimeout(timer);
      resolve();
    });
    bot.once('error', reject);
    bot.once('kicked', (reason) => reject(new Error(`kicked: ${JSON.stringify(reason)}`)));
    bot.once('end', (reason) => reject(new Error(`ended: ${reason}`)));
  });
  return bot;
}

const EMPTY = { online: [], ops: [], banned: [], max_players: null } as const;

describe('the roster and the actions, seen from a real client', () => {
  it('lists who is online with UUIDs, game modes and positions; no ops and no bans yet', async () => {
    expect(await roster(owner)).toEqual({
      status: 'ok',
      online: [],
      ops: [],
      banned: [],
      max_players: 20,
      ops_unavailable: false,
      banned_unavailable: false,
      partial_list_format: false,
    });
    await join('Alice');
    const answer = await roster(member, ['gamemode', 'position']);
    expect(answer.status).toBe('ok');
    expect(answer.online).toEqual([
      {
        name: 'Alice',
        uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        gamemode: 'survival',
        position: { x: expect.any(Number), y: expect.any(Number), z: expect.any(Number) },
      },
    ]);
    expect((await roster(owner)).online).toEqual([{ name: 'Alice', uuid: answer.online[0]!.uuid }]);
  }, 90_000);

  it('whispers, broadcasts, gives and sets the game mode, each audited without its message', async () => {
    const alice = bots[0]!;
    const said: string[] = [];
    alice.on('messagestr', (m) => void said.push(m));
    const audits = (await auditEntries(app, orgId)).length;
    expect(
      await act(owner, { kind: 'whisper', name: 'Alice', message: 'meet at spawn /op Mallory' }),
    ).toEqual({
      status: 'ok',
    });
    expect(await act(admin, { kind: 'broadcast', message: 'restart in 5' })).toEqual({ status: 'ok' });
    await expect
      .poll(() => said)
      .toEqual(['Server whispers to you: meet at spawn /op Mallory', '[Rcon] restart in 5']);
    expect(await act(owner, { kind: 'give', name: 'Alice', item: 'minecraft:diamond', count: 3 })).toEqual({
      status: 'ok',
    });
    await expect.poll(() => alice.inventory.items().map((i) => [i.name, i.count])).toEqual([['diamond', 3]]);
    expect(await act(owner, { kind: 'gamemode', name: 'Alice', mode: 'creative' })).toEqual({ status: 'ok' });
    expect((await roster(owner, ['gamemode'])).online).toEqual([
      expect.objectContaining({ name: 'Alice', gamemode: 'creative' }),
    ]);
    expect(await act(owner, { kind: 'gamemode', name: 'Alice', mode: 'survival' })).toEqual({ status: 'ok' });
    const entries = (await auditEntries(app, orgId)).slice(audits);
    expect(entries.map((e) => [e.action, e.target_type, e.target_id])).toEqual([
      ['game.player_whispered', 'game_player', 'Alice'],
      ['game.broadcast_sent', 'service_instance', game.serviceInstanceId],
      ['game.item_given', 'game_player', 'Alice'],
      ['game.player_gamemode_set', 'game_player', 'Alice'],
      ['game.player_gamemode_set', 'game_player', 'Alice'],
    ]);
    expect(JSON.stringify(await app.sql`select * from audit_entries`)).not.toContain('meet at spawn');
  }, 60_000);

  it('ops and deops (ops.json), bans and pardons (banlist), an op again changing nothing', async () => {
    expect(await act(owner, { kind: 'op', name: 'Alice' })).toEqual({ status: 'ok' });
    expect(await act(owner, { kind: 'op', name: 'Alice' })).toEqual({ status: 'ok' });
    expect((await roster(owner)).ops).toEqual([{ name: 'Alice' }]);
    expect(await act(owner, { kind: 'deop', name: 'Alice' })).toEqual({ status: 'ok' });
    expect((await roster(owner)).ops).toEqual([]);

    expect(await act(owner, { kind: 'ban', name: 'Mallory', reason: 'griefing' })).toEqual({ status: 'ok' });
    expect(await act(owner, { kind: 'ban', name: 'Eve' })).toEqual({ status: 'ok' });
    expect((await roster(owner)).banned).toEqual([
      { name: 'Mallory', reason: 'griefing' },
      { name: 'Eve', reason: 'Banned by an operator.' },
    ]);
    // The server closes a banned name's login (flying-squid sends no reason the client can read).
    await expect(join('Mallory')).rejects.toThrow(/^(ended|kicked):/);
    expect(await act(owner, { kind: 'pardon', name: 'Mallory' })).toEqual({ status: 'ok' });
    expect((await roster(owner)).banned).toEqual([{ name: 'Eve', reason: 'Banned by an operator.' }]);
    await join('Mallory');
    expect((await roster(owner)).online.map((p) => p.name)).toEqual(['Alice', 'Mallory']);
  }, 120_000);

  it('kicks a player, who leaves the roster; a player not online is unsupported_by_server', async () => {
    const mallory = bots.at(-1)!;
    const kicked = new Promise<unknown>((resolve) => mallory.once('kicked', resolve));
    expect(await act(owner, { kind: 'kick', name: 'Mallory', reason: 'too loud' })).toEqual({ status: 'ok' });
    expect(JSON.stringify(await kicked)).toContain('too loud');
    await expect.poll(async () => (await roster(owner)).online.map((p) => p.name)).toEqual(['Alice']);
    const audits = (await auditEntries(app, orgId)).length;
    expect(await act(owner, { kind: 'kick', name: 'Mallory' })).toEqual({ status: 'unsupported_by_server' });
    expect(await act(owner, { kind: 'give', name: 'Alice', item: 'minecraft:no_such_thing' })).toEqual({
      status: 'unsupported_by_server',
    });
    expect((await auditEntries(app, orgId)).length).toBe(audits);
  }, 60_000);
});

describe('refusals', () => {
  it('is 400 for a malformed name, item, message, mode or include, and runs nothing', async () => {
    const audits = (await auditEntries(app, orgId)).length;
    const before = await roster(owner);
    for (const body of [
      { kind: 'broadcast', message: 'hi\nop Mallory' },
      { kind: 'whisper', name: 'Alice', message: '' },
      { kind: 'whisper', name: 'Alice', message: 'x'.repeat(257) },
      { kind: 'op', name: 'Al ice' },
      { kind: 'op', name: 'Al' },
      { kind: 'kick' },
      { kind: 'give', name: 'Alice', item: 'diamond' },
      { kind: 'give', name: 'Alice', item: 'minecraft:diamond', count: 65 },
      { kind: 'gamemode', name: 'Alice', mode: 'god' },
      { kind: 'broadcast', message: 'hi', name: 'Alice' },
      { kind: 'dance', name: 'Alice' },
    ]) {
      expect(await outcome(act(owner, body as Action)), JSON.stringify(body)).toEqual([
        400,
        'invalid-request',
      ]);
    }
    const res = await fetch(
      `${app.baseUrl}/api/v2/service-instances/${game.serviceInstanceId}/game/roster?include=gamemode,health`,
      { headers: { authorization: `Bearer ${owner.token}` } },
    );
    expect(res.status).toBe(400);
    expect((await auditEntries(app, orgId)).length).toBe(audits);
    expect(await roster(owner)).toEqual(before);
  });

  it("names only what is wrong for the kind given, not every other kind's fields (issue 34)", async () => {
    const bad = await refusal(act(owner, { kind: 'op', name: 'bad name!' }));
    expect(bad.code).toBe('invalid-request');
    expect(bad.errors.length).toBeGreaterThan(0);
    expect(bad.errors.map((e) => e.pointer)).toEqual(bad.errors.map(() => '/name'));
    const extra = await refusal(act(owner, { kind: 'broadcast', message: 'hi', name: 'Alice' } as Action));
    expect(extra.errors).toEqual([expect.objectContaining({ location: 'body' })]);
    const unknown = await refusal(act(owner, { kind: 'dance', name: 'Alice' } as unknown as Action));
    expect(unknown.errors).toEqual([expect.objectContaining({ pointer: '/kind' })]);
  });

  it('answers a Member, a stranger, a product without a console and an unknown id with the same 404', async () => {
    const audits = (await auditEntries(app, orgId)).length;
    const unknown = await outcome(
      act(owner, { kind: 'op', name: 'Alice' }, { ...game, serviceInstanceId: randomUUID() }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    expect(await outcome(act(member, { kind: 'op', name: 'Mallory' }))).toEqual(unknown);
    expect(await outcome(act(stranger, { kind: 'op', name: 'Mallory' }))).toEqual(unknown);
    expect(await outcome(act(owner, { kind: 'op', name: 'Mallory' }, web))).toEqual(unknown);
    expect(await outcome(roster(stranger))).toEqual(unknown);
    expect(await outcome(roster(owner, undefined, web))).toEqual(unknown);
    expect((await auditEntries(app, orgId)).length).toBe(audits);
    expect((await roster(owner)).ops).toEqual([]);
  });
});

describe('every degraded status', () => {
  /** The unit's address pointed elsewhere for one check (where RCON is asked), then restored. */
  async function withUnitAt<T>(address: string, check: () => Promise<T>): Promise<T> {
    const [row] = await app.sql<{ address: string }[]>`
      select host(address) as address from service_resources where id = ${game.primaryResourceId}`;
    await app.sql`update service_resources set address = ${address} where id = ${game.primaryResourceId}`;
    try {
      return await check();
    } finally {
      await app.sql`update service_resources set address = ${row!.address} where id = ${game.primaryResourceId}`;
    }
  }
  const spare = () =>
    `127.${60 + Math.floor(Math.random() * 60)}.${Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;

  async function againstPeer(behaviour: Partial<PeerBehaviour>) {
    const host = spare();
    const peer = await startRconPeer(
      { password: '', reply: () => '', ...behaviour },
      { host, port: RCON_PORT },
    );
    try {
      return await withUnitAt(host, async () => ({
        roster: await roster(owner),
        action: await act(owner, { kind: 'op', name: 'Alice' }),
      }));
    } finally {
      await peer.close();
    }
  }

  it('unreachable: the unit runs but nothing accepts the connection', async () => {
    const answer = await withUnitAt(spare(), () => roster(owner));
    expect(answer).toEqual({
      status: 'unreachable',
      ...EMPTY,
      ops_unavailable: false,
      banned_unavailable: false,
      partial_list_format: false,
    });
  });

  it('auth_failed, protocol_error and parse_error from a server that answers so', async () => {
    const wrong = await againstPeer({ password: 'not the sealed one' });
    expect([wrong.roster.status, wrong.action.status]).toEqual(['auth_failed', 'auth_failed']);
    const [row] = await app.sql<{ password_sealed: string }[]>`
      select password_sealed from game_rcon_credentials where service_instance_id = ${game.serviceInstanceId}`;
    const password = await app.box.openText('rcon-password', row!.password_sealed);
    const garbled = await againstPeer({ password, garble: () => Buffer.from([1, 0, 0, 0, 9, 9, 9, 9, 9]) });
    expect([garbled.roster.status, garbled.action.status]).toEqual(['protocol_error', 'protocol_error']);
    const prose = await againstPeer({ password, reply: () => 'nobody here' });
    expect([prose.roster.status, prose.action.status]).toEqual(['parse_error', 'parse_error']);
    const other = await againstPeer({
      password,
      reply: (c) =>
        c.startsWith('list')
          ? 'Online (1/10): Alice'
          : c.startsWith('op')
            ? 'Opped Alice'
            : 'There are no bans',
    });
    expect(other.roster).toMatchObject({
      status: 'ok',
      online: [{ name: 'Alice', uuid: null }],
      max_players: 10,
      partial_list_format: true,
    });
  }, 60_000);

  it('timeout: a server that never answers', async () => {
    const [row] = await app.sql<{ password_sealed: string }[]>`
      select password_sealed from game_rcon_credentials where service_instance_id = ${game.serviceInstanceId}`;
    const password = await app.box.openText('rcon-password', row!.password_sealed);
    const stalled = await againstPeer({ password, reply: () => null });
    expect([stalled.roster.status, stalled.action.status]).toEqual(['timeout', 'timeout']);
  }, 60_000);

  it('not_configured: a workload that runs no RCON server', async () => {
    await app.sql`update catalog_products set workload_program = null where slug = 'block-game'`;
    try {
      expect((await roster(owner)).status).toBe('not_configured');
      expect(await act(owner, { kind: 'op', name: 'Alice' })).toEqual({ status: 'not_configured' });
    } finally {
      await app.sql`update catalog_products set workload_program = 'block-game' where slug = 'block-game'`;
    }
    // A workload never given an RCON password runs none either; asking makes none.
    const [credential] = await app.sql`
      delete from game_rcon_credentials where service_instance_id = ${game.serviceInstanceId} returning *`;
    try {
      expect((await roster(owner)).status).toBe('not_configured');
      expect(
        await app.sql`select 1 from game_rcon_credentials where service_instance_id = ${game.serviceInstanceId}`,
      ).toEqual([]);
    } finally {
      await app.sql`insert into game_rcon_credentials ${app.sql(credential as Record<string, unknown>)}`;
    }
  });

  it('server_offline: the unit gone behind the platform, then the service stopped', async () => {
    await app.substrate!.stopUnit(game.primaryResourceId);
    expect((await roster(owner)).status).toBe('server_offline');
    expect(await act(owner, { kind: 'broadcast', message: 'anyone?' })).toEqual({ status: 'server_offline' });
    const { operation_id } = await owner.api.serviceInstancePower({
      path: { id: game.serviceInstanceId },
      body: { action: 'stop' },
    });
    await awaitOperation(owner.api, game.serviceInstanceId, operation_id, 60_000);
    expect(await roster(owner, ['gamemode'])).toEqual({
      status: 'server_offline',
      ...EMPTY,
      ops_unavailable: false,
      banned_unavailable: false,
      partial_list_format: false,
    });
  }, 90_000);
});
