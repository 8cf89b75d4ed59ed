// The arena game end to end (document 2 §2 "Game live info", §4 "Game servers"; DECISIONS.md §6 "Games"):
// provisioning runs Debian's ioq3ded on the unit's address with the map the platform makes, its
// sv_hostname the service's name, its RCON password sealed in PostgreSQL and handed only to the
// workload's environment; live info asks it over the Quake 3 protocol through the real edge. Every status
// the route answers is reached, and every refusal reads back that nothing changed.
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let staff: Staff;
let owner: Caller;
let member: Caller;
let stranger: Caller;
let arena: Provisioned;
let block: Provisioned;
const NAME = '^1Red ^7Arena ^^2Room^';

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  staff = await staffMember(app, smtp, 'li-staff', ['manage_services']);
  [owner, member, stranger] = await Promise.all([
    signedIn(app, smtp, 'li-owner'),
    signedIn(app, smtp, 'li-member'),
    signedIn(app, smtp, 'li-stranger'),
  ]);
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Arena', slug: `arena-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
  ).id;
  [arena, block] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: NAME }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' }),
  ]);
  await edge.caughtUp();
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const live = (c: Caller, p: Provisioned = arena) =>
  c.api.gameLiveInfoGet({ path: { id: p.serviceInstanceId } });

async function unitAddress(p: Provisioned): Promise<string> {
  const [row] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${p.primaryResourceId}`;
  return row!.address;
}

/** The password the workload was given (its environment, as the agent keeps it). */
async function workloadPassword(p: Provisioned): Promise<string> {
  const unit = JSON.parse(
    await readFile(join(app.substrateDir, 'units', p.primaryResourceId, 'unit.json'), 'utf8'),
  ) as { env: Record<string, string> };
  return unit.env.SVC_RCON_PASSWORD!;
}

/** Quake 3's UDP rcon, straight to the unit (the platform's own way in; never through the edge). */
async function udpRcon(host: string, password: string, command: string): Promise<string> {
  const socket = createSocket('udp4');
  socket.connect(27960, host);
  await once(socket, 'connect');
  socket.send(
    Buffer.concat([Buffer.from([255, 255, 255, 255]), Buffer.from(`rcon ${password} ${command}\n`)]),
  );
  const [packet] = (await Promise.race([
    once(socket, 'message'),
    new Promise((_, reject) => setTimeout(() => reject(new Error('no rcon answer')), 3000)),
  ])) as [Buffer];
  socket.close();
  return packet.subarray(4).toString('latin1');
}

describe('the arena game runs ioq3ded', () => {
  it('answers live info through the edge, its hostname the service name without colour codes', async () => {
    await expect.poll(async () => (await live(owner)).status, { timeout: 15_000, interval: 200 }).toBe('ok');
    expect(await live(member)).toEqual({
      status: 'ok',
      info: {
        hostname: 'Red Arena ^Room^',
        gametype: 'ffa',
        map: 'tiny',
        players_connected: 0,
        slots: 8,
        players: [],
      },
    });
  });

  it('keeps the RCON password sealed, and gives it to the server on its console, not its command line', async () => {
    const password = await workloadPassword(arena);
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const [row] = await app.sql<{ password_sealed: string }[]>`
      select password_sealed from game_rcon_credentials where service_instance_id = ${arena.serviceInstanceId}`;
    expect(row!.password_sealed).not.toContain(password);
    expect(await app.box.openText('rcon-password', row!.password_sealed)).toBe(password);
    // The server took it: its rcon answers the password and refuses another.
    const address = await unitAddress(arena);
    expect(await udpRcon(address, password, 'status')).toMatch(/^print\nmap: tiny\n/);
    expect(await udpRcon(address, 'wrong', 'status')).toMatch(/Bad rconpassword/);
    // No process shows it in its command line (ps shows every user's).
    const leaks: string[] = [];
    for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '');
      if (cmdline.includes(password)) leaks.push(pid);
    }
    expect(leaks).toEqual([]);
    // Nor does any log line of the app.
    expect(JSON.stringify(app.logs)).not.toContain(password);
  });

  it('is offline while the service is stopped, and ok once it is started again', async () => {
    const stop = await owner.api.serviceInstancePower({
      path: { id: arena.serviceInstanceId },
      body: { action: 'stop' },
    });
    await awaitOperation(owner.api, arena.serviceInstanceId, stop.operation_id, 60_000);
    expect(await live(owner)).toEqual({ status: 'offline' });
    const start = await owner.api.serviceInstancePower({
      path: { id: arena.serviceInstanceId },
      body: { action: 'start' },
    });
    await awaitOperation(owner.api, arena.serviceInstanceId, start.operation_id, 60_000);
    await expect.poll(async () => (await live(owner)).status, { timeout: 15_000, interval: 200 }).toBe('ok');
    // The same password across restarts: it was made once.
    const [n] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from game_rcon_credentials where service_instance_id = ${arena.serviceInstanceId}`;
    expect(n!.n).toBe(1);
  });

  it('is offline when the program is down though the service runs', async () => {
    // The edge forwards to a port nothing answers on: the unit's program is killed behind the platform's back.
    const pidFile = join(app.substrateDir, 'units', arena.primaryResourceId, 'workload.pid');
    // The agent writes it after it has launched the program, which may answer first (CI once read ENOENT).
    let pid = 0;
    const readPid = async () =>
      (pid = await readFile(pidFile, 'utf8').then((t) => (JSON.parse(t) as { pid: number }).pid, () => 0));
    await expect.poll(readPid, { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
    await app.substrate!.stopUnit(arena.primaryResourceId);
    expect(() => process.kill(pid, 0)).toThrow();
    await expect
      .poll(async () => (await live(owner)).status, { timeout: 10_000, interval: 300 })
      .toBe('offline');
    await app.worker!.run('reconcile_units');
    await expect.poll(async () => (await live(owner)).status, { timeout: 15_000, interval: 300 }).toBe('ok');
  });

  it('is no_address without a primary allocation, and not_configured for a workload that runs no game', async () => {
    const [allocation] = await app.sql<{ id: string }[]>`
      delete from port_allocations where service_instance_id = ${arena.serviceInstanceId} and is_primary returning *`;
    try {
      expect(await live(owner)).toEqual({ status: 'no_address' });
    } finally {
      await app.sql`insert into port_allocations ${app.sql(allocation as Record<string, unknown>)}`;
    }
    await app.sql`update catalog_products set workload_program = null where slug = 'arena-game'`;
    try {
      expect(await live(owner)).toEqual({ status: 'not_configured' });
    } finally {
      await app.sql`update catalog_products set workload_program = 'arena-game' where slug = 'arena-game'`;
    }
    await expect.poll(async () => (await live(owner)).status, { timeout: 10_000, interval: 300 }).toBe('ok');
  });
});

describe('who may read it', () => {
  it('is the 404 of an unknown id for a stranger and an unknown id; not_configured for the block game', async () => {
    const before = await app.sql`select * from game_rcon_credentials order by service_instance_id`;
    const unknown = await outcome(owner.api.gameLiveInfoGet({ path: { id: randomUUID() } }));
    expect(unknown).toEqual([404, 'not-found']);
    expect(await outcome(live(stranger))).toEqual(unknown);
    expect(await live(owner, block)).toEqual({ status: 'not_configured' });
    expect(await app.sql`select * from game_rcon_credentials order by service_instance_id`).toEqual(before);
  });
});
