// External access end to end on the local substrate (document 2 §4 "External access", DECISIONS.md §6
// "Network"): allocations made at provisioning and on request, real TCP and UDP forwarded by a real edge
// to the unit's own loopback address from two client addresses, a VPS's SSH port accepting exactly the
// machine's current credentials, the quota decided under the service's lock against parallel requests,
// every refusal reading back that nothing changed, the live state (and an edge that does not answer),
// protection modes, staff's extra slots.
import dgram from 'node:dgram';
import { once } from 'node:events';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ECHO_PROGRAM, randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { sshRun } from '../support/ssh.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { passwordAccess } from '../support/machine-access.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let game: Provisioned;
let vps: Provisioned;
let web: Provisioned;
const POOL_SIZE = 16;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(POOL_SIZE) },
  });
  edge = await startTestEdge(app);
  staff = await staffMember(app, smtp, 'ea-staff', ['manage_services']);
  [owner, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'ea-owner'),
    signedIn(app, smtp, 'ea-billing'),
    signedIn(app, smtp, 'ea-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Ports', slug: `ports-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Ports', slug: 'ports' } })
  ).id;
  [game, vps, web] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Game' }),
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
  ]);
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const list = (c: Caller, p: Provisioned = game) =>
  c.api.externalAccessGet({ path: { id: p.serviceInstanceId } });
const add = (
  c: Caller,
  body: { protocol: 'tcp' | 'udp'; internal_port?: number; match_port?: boolean },
  p: Provisioned = game,
) => c.api.externalAccessAllocationCreate({ path: { id: p.serviceInstanceId }, body });
const release = (c: Caller, allocationId: string, p: Provisioned = game) =>
  c.api.externalAccessAllocationDelete({ path: { id: p.serviceInstanceId, allocation_id: allocationId } });

async function allocationRows(p: Provisioned = game) {
  return app.sql`
    select id, external_port, internal_port, protocol from port_allocations
    where service_instance_id = ${p.serviceInstanceId} order by id`;
}

async function unitAddress(p: Provisioned): Promise<string> {
  const [row] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${p.primaryResourceId}`;
  return row!.address;
}

/**
 * The game's workload runs the echo program in place of the game, dropped into its volume as a customer
 * would drop a server binary: the unit is confined to its volume, so that is where its program comes from.
 */
async function runEcho(p: Provisioned, ports: number[]): Promise<void> {
  const address = await unitAddress(p);
  await app.substrate!.stopUnit(p.primaryResourceId);
  await copyFile(ECHO_PROGRAM, join(app.substrateDir, 'volumes', p.volumeResourceId, 'echo-unit.mjs'));
  await app.substrate!.startUnit({
    id: p.primaryResourceId,
    kind: 'workload',
    volumeId: p.volumeResourceId,
    command: [process.execPath, '/echo-unit.mjs'],
    env: { ECHO_PORTS: ports.join(',') },
    address,
  });
  // Listening once a direct connection is accepted.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: address, port: ports[0]! }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the echo program did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends `text` over TCP from `localAddress` to the edge's port; answers what came back, or the error code. */
function tcpRoundTrip(port: number, text: string, localAddress: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: app.config.host, port, localAddress });
    let got = '';
    socket.setTimeout(5_000, () => {
      socket.destroy();
      resolve(`timeout after ${JSON.stringify(got)}`);
    });
    socket.on('connect', () => socket.write(text));
    socket.on('data', (d) => {
      got += d.toString();
      if (got.length >= text.length) {
        socket.end();
        resolve(got);
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.on('close', () => resolve(got === '' ? 'closed' : got));
  });
}

async function udpRoundTrip(port: number, text: string, localAddress: string): Promise<string> {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, localAddress);
  await once(socket, 'listening');
  try {
    const reply = once(socket, 'message');
    socket.send(text, port, app.config.host);
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), 3_000));
    const got = await Promise.race([reply, timeout]);
    return got === null ? 'timeout' : (got[0] as Buffer).toString();
  } finally {
    socket.close();
  }
}

describe('provisioning', () => {
  it('gives each unit its own address and the service its primary allocation', async () => {
    const [g, v, w] = await Promise.all([unitAddress(game), unitAddress(vps), unitAddress(web)]);
    for (const a of [g, v, w]) expect(a).toMatch(/^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+$/);
    expect(new Set([g, v, w]).size).toBe(3);

    const gameAccess = await list(owner);
    expect(gameAccess).toMatchObject({ used: 0, free_slots: 3, extra_slots: 0, is_dedicated_ip: false });
    expect(gameAccess.allocations).toEqual([
      expect.objectContaining({
        internal_port: 25565,
        protocol: 'tcp',
        is_primary: true,
        is_system: false,
        external_ip: app.config.host,
        network_protection_mode: 'normal',
        protection_managed: true,
        protection_state: 'unknown',
      }),
    ]);
    const [primary] = gameAccess.allocations;
    expect(primary!.display).toBe(`${app.config.host}:${primary!.external_port}/tcp`);
    const [from, to] = app.config.portPool ? [app.config.portPool.from, app.config.portPool.to] : [0, 0];
    expect(primary!.external_port).toBeGreaterThanOrEqual(from);
    expect(primary!.external_port).toBeLessThanOrEqual(to);

    const vpsAccess = await list(owner, vps);
    expect(vpsAccess.allocations).toEqual([
      expect.objectContaining({ internal_port: 22, protocol: 'tcp', is_primary: true, is_system: true }),
    ]);
  });

  it('is the 404 of an unknown id for a product without external access, and for outsiders', async () => {
    expect(await outcome(list(owner, web))).toEqual([404, 'not-found']);
    expect(await outcome(list(stranger))).toEqual([404, 'not-found']);
    expect(await outcome(add(stranger, { protocol: 'tcp', internal_port: 8000 }))).toEqual([
      404,
      'not-found',
    ]);
    // Billing reads but does not change the service.
    expect((await list(billing)).allocations).toHaveLength(1);
    expect(await outcome(add(billing, { protocol: 'tcp', internal_port: 8000 }))).toEqual([404, 'not-found']);
    expect(await allocationRows()).toHaveLength(1);
  });
});

describe('forwarding through the edge', () => {
  it('echoes TCP on the primary allocation and UDP on a requested one, from two client addresses', async () => {
    await runEcho(game, [25565, 27015]);
    const udp = await add(owner, { protocol: 'udp', internal_port: 27015 });
    expect(udp).toMatchObject({ protocol: 'udp', internal_port: 27015, is_primary: false, is_system: false });
    await edge.caughtUp();
    const primary = (await list(owner)).allocations.find((a) => a.is_primary)!;

    expect(await tcpRoundTrip(primary.external_port, 'hello over tcp', '127.0.0.2')).toBe('hello over tcp');
    expect(await tcpRoundTrip(primary.external_port, 'and again', '127.0.0.3')).toBe('and again');
    // The unit sees the edge, not the client: the reply names the host's side of the unit's network, the
    // one address that reaches it (substrate/local/sandbox/network.ts).
    expect(await udpRoundTrip(udp.external_port, 'ping', '127.0.0.2')).toMatch(/^169\.254\.1\.1\|ping$/);
    expect(await udpRoundTrip(udp.external_port, 'pong', '127.0.0.3')).toMatch(/\|pong$/);

    const live = await owner.api.externalAccessLiveGet({ path: { id: game.serviceInstanceId } });
    expect(live.degraded).toBe(false);
    expect(live.allocations.map((a) => a.id).sort()).toEqual([primary.id, udp.id].sort());
    expect(live.allocations.every((a) => a.protection_state === 'normal')).toBe(true);

    // Released: the edge stops forwarding the port.
    await release(owner, udp.id);
    await edge.caughtUp();
    expect(await udpRoundTrip(udp.external_port, 'gone?', '127.0.0.2')).toBe('timeout');
    expect((await auditEntries(app, orgId)).map((e) => e.action)).toEqual(
      expect.arrayContaining(['external_access.allocation_created', 'external_access.allocation_released']),
    );
  });

  it("reaches the VPS's SSH server, which accepts only the machine's current credentials", async () => {
    const system = (await list(owner, vps)).allocations[0]!;
    await edge.caughtUp();
    const access = await passwordAccess();
    await app.substrate!.setMachineAccess(vps.primaryResourceId, vps.volumeResourceId, access.credentials);
    const sshLogin = (password: string) =>
      sshRun({
        host: app.config.host,
        port: system.external_port,
        localAddress: '127.0.0.2',
        username: access.username,
        password,
      });
    // No restart is needed: the machine's sshd reads /etc/shadow at each attempt. The session is the
    // machine's root, confined (DECISIONS.md §8): uid 0 inside is an unprivileged id of this host.
    expect(await sshLogin(access.password)).toContain('uid=0(root) gid=0(root)');
    expect(await sshLogin('not-the-password')).toBe('client-authentication');

    // A reinstall clears the credentials: the old password fails from outside too.
    const started = await owner.api.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
      body: { confirm: true, os_image: 'debian-12' },
    });
    expect((await awaitOperation(owner.api, vps.serviceInstanceId, started.operation_id)).status).toBe(
      'succeeded',
    );
    // The machine boots again after the reinstall: its sshd answers within seconds.
    await expect
      .poll(() => sshLogin(access.password), { timeout: 20_000, interval: 500 })
      .toBe('client-authentication');
  });
});

describe('requesting allocations', () => {
  it('lets exactly the free slots through when requests race, then refuses with the limit', async () => {
    const before = (await list(owner)).used;
    expect(before).toBe(0);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => outcome(add(owner, { protocol: 'tcp', internal_port: 9000 + i }))),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r !== 'ok')).toEqual(Array(3).fill([422, 'port-quota-exhausted']));
    const after = await list(owner);
    expect(after).toMatchObject({ used: 3, free_slots: 0 });
    expect(after.allocations).toHaveLength(4);

    const rows = await allocationRows();
    try {
      await add(owner, { protocol: 'udp', internal_port: 9100 });
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ status: 422, code: 'port-quota-exhausted', details: { limit: 3 } });
    }
    expect(await allocationRows()).toEqual(rows);
  });

  it('refuses a duplicate, a missing internal port, and a full pool, changing nothing', async () => {
    await staff.elevated.adminServiceExtraSlotsSet({
      path: { id: game.serviceInstanceId },
      body: { extra_slots: 20 },
    });
    const rows = await allocationRows();
    const taken = rows.find((r) => r.internal_port === 9000)!;
    expect(await outcome(add(owner, { protocol: 'tcp', internal_port: 9000 }))).toEqual([
      422,
      'duplicate-allocation',
    ]);
    expect(await outcome(add(owner, { protocol: 'tcp' }))).toEqual([400, 'invalid-field-value']);
    expect(await allocationRows()).toEqual(rows);
    expect(taken).toBeDefined();

    // The same internal port over the other protocol is another allocation; match_port mirrors the public port.
    const udp = await add(owner, { protocol: 'udp', internal_port: 9000 });
    expect(udp.internal_port).toBe(9000);
    const mirrored = await add(owner, { protocol: 'tcp', match_port: true, internal_port: 1 });
    expect(mirrored.internal_port).toBe(mirrored.external_port);

    // Fill the pool: then no-free-port, and nothing more is made.
    for (;;) {
      const r = await outcome(add(owner, { protocol: 'tcp', match_port: true }));
      if (r !== 'ok') {
        expect(r).toEqual([422, 'no-free-port']);
        break;
      }
    }
    const full = await app.sql<{ n: number }[]>`select count(*)::int as n from port_allocations`;
    expect(full[0]!.n).toBe(POOL_SIZE);
    expect(await outcome(add(owner, { protocol: 'udp', internal_port: 7777 }))).toEqual([
      422,
      'no-free-port',
    ]);
    expect((await app.sql<{ n: number }[]>`select count(*)::int as n from port_allocations`)[0]!.n).toBe(
      POOL_SIZE,
    );
  });

  it('refuses releasing the platform’s own allocations and other services’ ones', async () => {
    const [primary] = (await list(owner)).allocations;
    const [system] = (await list(owner, vps)).allocations;
    expect(await outcome(release(owner, primary!.id))).toEqual([422, 'system-allocation']);
    expect(await outcome(release(owner, system!.id, vps))).toEqual([422, 'system-allocation']);
    expect(await outcome(release(owner, system!.id, game))).toEqual([404, 'not-found']);
    expect(await outcome(release(billing, primary!.id))).toEqual([404, 'not-found']);
    expect((await list(owner)).allocations.map((a) => a.id)).toContain(primary!.id);
    expect((await list(owner, vps)).allocations).toHaveLength(1);
  });
});

describe('protection and live state', () => {
  it('offers only normal; other modes are refused; no dedicated IP', async () => {
    const modes = await owner.api.externalAccessProtectionModesGet({ path: { id: game.serviceInstanceId } });
    expect(modes).toEqual({ default_mode: 'normal', game: ['normal'], vps: ['normal'] });
    const [primary] = (await list(owner)).allocations;
    const path = { id: game.serviceInstanceId, allocation_id: primary!.id };
    expect(
      await owner.api.externalAccessAllocationProtectionModeSet({ path, body: { mode: 'normal' } }),
    ).toMatchObject({
      id: primary!.id,
      network_protection_mode: 'normal',
    });
    expect(
      await outcome(
        owner.api.externalAccessAllocationProtectionModeSet({ path, body: { mode: 'attack_mitigation' } }),
      ),
    ).toEqual([422, 'protection-mode-unsupported']);
    expect(
      await outcome(
        owner.api.externalAccessDedicatedIpProtectionModeSet({
          path: { id: game.serviceInstanceId },
          body: { mode: 'normal' },
        }),
      ),
    ).toEqual([404, 'not-found']);
    expect((await list(owner)).allocations[0]!.network_protection_mode).toBe('normal');
  });

  it('says degraded and omits what an edge that does not answer serves, within about a second', async () => {
    // An edge process that is alive by its heartbeat but hangs: it accepts and never answers.
    const hung = net.createServer(() => {});
    hung.listen(0, '127.0.0.1');
    await once(hung, 'listening');
    const { port } = hung.address() as net.AddressInfo;
    await app.sql`
      insert into edge_nodes (id, address, control_url, applied_generation, heartbeat_seconds, started_at, heartbeat_at)
      values ('hung-edge', ${app.config.host}::inet, ${`http://127.0.0.1:${port}`}, 0, 60, now(), now())`;
    try {
      const started = Date.now();
      const live = await owner.api.externalAccessLiveGet({ path: { id: game.serviceInstanceId } });
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(live).toEqual({ degraded: true, allocations: [] });
    } finally {
      await app.sql`delete from edge_nodes where id = 'hung-edge'`;
      hung.close();
    }
    expect((await owner.api.externalAccessLiveGet({ path: { id: game.serviceInstanceId } })).degraded).toBe(
      false,
    );
  });
});

describe('extra slots (staff)', () => {
  it('needs manage_services and sets 0-20', async () => {
    const path = { id: vps.serviceInstanceId };
    expect(await outcome(staff.plain.adminServiceExtraSlotsSet({ path, body: { extra_slots: 2 } }))).toEqual([
      403,
      'elevation-required',
    ]);
    expect(
      await outcome(staff.elevated.adminServiceExtraSlotsSet({ path, body: { extra_slots: 21 } })),
    ).toEqual([400, 'invalid-request']);
    expect(await list(owner, vps)).toMatchObject({ extra_slots: 0, free_slots: 3 });
    expect(await staff.elevated.adminServiceExtraSlotsSet({ path, body: { extra_slots: 2 } })).toEqual({
      service_instance_id: vps.serviceInstanceId,
      extra_slots: 2,
      used: 0,
      free_slots: 5,
    });
    expect(await list(owner, vps)).toMatchObject({ extra_slots: 2, free_slots: 5 });
  });
});
