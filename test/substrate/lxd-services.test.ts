// The platform on SUBSTRATE=lxd, end to end through the API: provisioning a web app (a workload running
// the catalog's program in its container) and a VPS, power stop and start, a backup and its restore, and
// a reinstall, each seen in the LXD cluster itself (the instance's state, the files on the volume); the
// VPS's screen through the gateway, drawn by its agent in the container; the block game joined by a real
// client through the edge, its roster and actions over RCON.
// Runs where the test setup started an LXD cluster (LXD installed, root).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { sshRun } from '../support/ssh.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { deleteInstance, execIn, findInstance } from '../../server/src/substrate/lxd/instances.js';
import { deleteVolume, findVolume, onMember } from '../../server/src/substrate/lxd/volumes.js';
import { unitDirIn, volumeDirIn } from '../../server/src/substrate/lxd/paths.js';
import { eventually } from './drivers.js';
import { openScreenSocket, resizeShell } from '@svcplatform/sdk';
import mineflayer, { type Bot } from 'mineflayer';
import { MINECRAFT_VERSION } from '../../server/src/workloads/block/version.js';
import { closeOf, ConsoleReader } from '../consoles/sockets.js';
import { ENCODING_RAW, RfbClient } from '../consoles/rfb.js';
import { readText } from '../consoles/text-cells.js';
import { refusal } from '../support/refusal.js';
import { keyPair, keysDir, removeDir, sshByKey } from '../vps-access/ssh-login.js';

const lxdUrl = inject('lxdUrl');

describe.skipIf(!lxdUrl)('services on the LXD substrate', () => {
  let app: TestApp;
  let smtp: TestSmtp;
  let staff: Staff;
  let owner: Caller;
  let projectId: string;
  let site: Provisioned;
  let vps: Provisioned;
  let edge: TestEdge;
  // A project of its own: runs sharing the cluster never see (or stop) each other's instances.
  const project = `t${randomUUID().slice(0, 8)}`;
  const lxd = new LxdClient({ url: lxdUrl ?? 'unix:/nowhere', project });
  const instanceOf = (p: Provisioned) => `svc-${p.primaryResourceId}`;
  const inSite = (command: string) => execIn(lxd, instanceOf(site), ['sh', '-c', command], { output: true });

  beforeAll(async () => {
    await lxd.call('POST', '/1.0/projects', {
      name: project,
      config: { 'features.images': 'false', 'features.profiles': 'false', 'features.storage.volumes': 'true' },
    });
    smtp = await startTestSmtp();
    app = await startTestApp({
      env: { SMTP_URL: smtp.url, SUBSTRATE: 'lxd', LXD_URL: lxdUrl!, LXD_PROJECT: project, PORT_POOL: randomPortPool(8) },
      gateway: true,
    });
    edge = await startTestEdge(app, { substrate: app.substrate! });
    staff = await staffMember(app, smtp, 'lxd-staff', ['manage_services']);
    owner = await signedIn(app, smtp, 'lxd-owner');
    const orgId = (
      await owner.api.organizationCreate({ body: { name: 'On LXD', slug: `lxd-${Date.now().toString(36)}` } })
    ).id;
    projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Sites', slug: 'sites' } })).id;
    site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
  }, 240_000);
  const bots: Bot[] = [];
  afterAll(async () => {
    for (const bot of bots) bot.quit();
    await edge?.stop();
    await app?.close();
    await smtp?.close();
    // Listed as URLs: /1.0/instances/NAME?project=P.
    const nameOf = (url: string) => url.split('?')[0]!.split('/').pop()!;
    const { metadata: instances } = await lxd.call<string[]>('GET', '/1.0/instances');
    for (const url of instances) await deleteInstance(lxd, nameOf(url));
    const { metadata: volumes } = await lxd.call<string[]>('GET', '/1.0/storage-pools/default/volumes/custom');
    for (const url of volumes) await deleteVolume(lxd, { name: 'default' }, nameOf(url));
    await lxd.call('DELETE', `/1.0/projects/${project}`);
  });

  it('provisions a web app into a running container whose agent runs the catalog program', async () => {
    expect((await findInstance(lxd, instanceOf(site)))?.status).toBe('Running');
    const service = await owner.api.serviceInstanceGet({ path: { id: site.serviceInstanceId } });
    expect(service.status).toBe('running');
    // The agent acknowledges its contract, then starts the program.
    const program = await eventually('the web app program', async () => {
      const line = (await inSite('ps -o args')).stdout.split('\n').find((l) => l.includes('/workloads/'));
      return line ?? undefined;
    });
    expect(program).toBe('/usr/bin/node /opt/svc/server/src/workloads/web-app.mjs');
  });

  it('stops and starts the service: the container and its program follow', async () => {
    const stop = await owner.api.serviceInstancePower({ path: { id: site.serviceInstanceId }, body: { action: 'stop' } });
    expect(await awaitOperation(owner.api, site.serviceInstanceId, stop.operation_id, 90_000)).toMatchObject({
      status: 'succeeded',
    });
    expect((await findInstance(lxd, instanceOf(site)))?.status).toBe('Stopped');
    expect((await owner.api.serviceInstanceGet({ path: { id: site.serviceInstanceId } })).status).toBe('stopped');

    const start = await owner.api.serviceInstancePower({ path: { id: site.serviceInstanceId }, body: { action: 'start' } });
    expect(await awaitOperation(owner.api, site.serviceInstanceId, start.operation_id, 90_000)).toMatchObject({
      status: 'succeeded',
    });
    expect((await findInstance(lxd, instanceOf(site)))?.status).toBe('Running');
    await eventually('the program again', async () =>
      (await inSite('ps -o args')).stdout.includes('web-app.mjs') ? true : undefined,
    );
  });

  it('backs up the volume as an LXD snapshot and restores it whole', async () => {
    const volume = volumeDirIn(site.volumeResourceId);
    await inSite(`echo 'version 1' > ${volume}/index.html`);
    const at = { id: site.serviceInstanceId, resource_id: site.volumeResourceId };
    const created = await owner.api.backupCreate({ path: at, body: { name: 'before' } });
    expect(await awaitOperation(owner.api, site.serviceInstanceId, created.operation_id, 90_000)).toMatchObject({
      status: 'succeeded',
    });
    // A `dir` volume lives on one member (placement spreads them): the snapshot is read there. (LXD 5.0
    // lists no snapshots of a volume on another member than the one asked, even with a target; a
    // snapshot's own GET finds it.)
    const kept = await findVolume(lxd, { name: 'default' }, `svc-${site.volumeResourceId}`);
    const snapshot = await lxd.call<{ name: string }>(
      'GET',
      `/1.0/storage-pools/default/volumes/custom/svc-${site.volumeResourceId}/snapshots/${created.backup.id}`,
      undefined,
      onMember(kept!),
    );
    expect(snapshot.metadata.name).toBe(created.backup.id);

    await inSite(`echo 'version 2' > ${volume}/index.html; echo later > ${volume}/later.txt`);
    const restore = await owner.api.backupRestore({ path: { ...at, backup_id: created.backup.id } });
    expect(await awaitOperation(owner.api, site.serviceInstanceId, restore.operation_id, 120_000)).toMatchObject({
      status: 'succeeded',
      phase: 'starting',
    });
    expect((await inSite(`cat ${volume}/index.html; ls ${volume}`)).stdout).toBe('version 1\nindex.html\n');
    expect((await findInstance(lxd, instanceOf(site)))?.status).toBe('Running');
  });

  it('provisions a VPS and reinstalls it: a fresh image on a wiped volume', async () => {
    vps = await provisionService(staff.elevated, { projectId, productSlug: 'vps-small', osImage: 'debian-12' });
    const name = `svc-${vps.primaryResourceId}`;
    expect((await findInstance(lxd, name))?.status).toBe('Running');
    const rootfs = `${volumeDirIn(vps.volumeResourceId)}/rootfs`;
    const before = (await execIn(lxd, name, ['cat', `${rootfs}/etc/svc-image`], { output: true })).stdout.trim();
    expect(before).toBe('debian-12');
    await execIn(lxd, name, ['sh', '-c', `echo junk > ${rootfs}/root/left-behind`]);

    const accepted = await owner.api.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
      body: { confirm: true, os_image: 'ubuntu-24.04' },
    });
    expect(await awaitOperation(owner.api, vps.serviceInstanceId, accepted.operation_id, 120_000)).toMatchObject({
      status: 'succeeded',
    });
    const after = await execIn(lxd, name, ['sh', '-c', `cat ${rootfs}/etc/svc-image; ls ${rootfs}/root`], { output: true });
    expect(after.stdout).toBe('ubuntu-24.04\n');

    // Its system allocation reaches the SSH server of the machine's agent in the container, through the
    // edge and the instance's proxy device, which accepts the machine's current credentials only.
    const [system] = (await owner.api.externalAccessGet({ path: { id: vps.serviceInstanceId } })).allocations;
    expect(system).toMatchObject({ protocol: 'tcp', internal_port: 22 });
    // The edge exposes the port once the instance exists (its next tick after provisioning made it).
    const device = await eventually('the proxy device of port 22', async () => {
      const { metadata } = await lxd.call<{ devices: Record<string, Record<string, string>> }>('GET', `/1.0/instances/${name}`);
      return metadata.devices['port-tcp-22'];
    });
    expect(device).toMatchObject({ type: 'proxy', bind: 'host', connect: expect.stringMatching(/^tcp:127\./) });
    // Keys and a password set through the API (DECISIONS.md §8 "VPS access"), written into the volume by
    // the worker's job and read by the agent's SSH server at each attempt.
    const machinePath = { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId };
    const dir = await keysDir();
    try {
      const key = await keyPair(dir, 'lxd-key');
      await owner.api.vpsAccessSshKeysSet({ path: machinePath, body: { keys: [{ public_key: key.publicLine }] } });
      expect(await eventually('a key login through the edge by OpenSSH', async () => {
        const out = await sshByKey(app.config.host, system!.external_port, key);
        return out.includes('machine') ? out : undefined;
      }, 60_000)).toContain(`machine ${vps.primaryResourceId}`);
      const login = (password: string) =>
        sshRun({ host: app.config.host, port: system!.external_port, username: 'root', password });
      // Password sign-in is off until a password is set.
      expect(await login('anything')).toBe('client-authentication');
      const { password } = await owner.api.vpsAccessRootPasswordReset({ path: machinePath });
      expect(await eventually('a password login through the edge', async () => {
        const out = await login(password);
        return out.includes('machine') ? out : undefined;
      })).toContain(`machine ${vps.primaryResourceId}`);
      expect(await login('not-the-password')).toBe('client-authentication');
      await owner.api.vpsAccessSshKeysSet({ path: machinePath, body: { keys: [] } });
      expect(await eventually('the key refused', async () =>
        (await sshByKey(app.config.host, system!.external_port, key)) === 'refused' ? true : undefined,
      )).toBe(true);
    } finally {
      await removeDir(dir);
    }
  });

  it("shows the VPS's screen through a gateway ticket: the agent's text screen, drawn in its container", async () => {
    const machine = vps.primaryResourceId;
    const name = instanceOf(vps);
    // The agent in the instance serves it (the image has no Xvnc) and says where, as on the local substrate.
    const endpoint = await eventually('screen.json in the instance', async () => {
      const read = await execIn(lxd, name, ['cat', `${unitDirIn(machine)}/screen.json`], { output: true });
      return read.code === 0 ? (JSON.parse(read.stdout) as { dir: string }) : undefined;
    });
    expect(endpoint.dir).toMatch(/^\/tmp\/svc-screen-/);

    const path = { id: vps.serviceInstanceId, resource_id: machine };
    const rfb = new RfbClient(await openScreenSocket(await owner.api.screenTicketCreate({ path, query: { force: true } })));
    expect(await rfb.handshake()).toEqual({
      version: 'RFB 003.008\n',
      securityTypes: [1],
      securityResult: 0,
      width: 640,
      height: 390,
      bitsPerPixel: 32,
      name: `machine ${machine}`,
    });
    rfb.setEncodings([ENCODING_RAW]);
    rfb.requestUpdate(false, 0, 0, 640, 390);
    const [rect] = await rfb.readUpdate();
    expect([rect!.x, rect!.y, rect!.width, rect!.height, rect!.encoding]).toEqual([0, 0, 640, 390, ENCODING_RAW]);
    expect(rect!.data.length).toBe(640 * 390 * 4);
    const { lines } = readText(rect!);
    expect(lines[0]).toBe(`machine ${machine} (lxd substrate)`);
    expect(lines[1]).toBe('image: ubuntu-24.04');
    expect(lines).toContain('login:');
    // The bridge runs inside the container, one per viewer, and goes with its viewer.
    const bridges = async () =>
      (await execIn(lxd, name, ['sh', '-c', "ps -o args | grep -c '[s]creen.json'"], { output: true })).stdout.trim();
    expect(await bridges()).toBe('1');
    const closed = closeOf(rfb.ws);
    rfb.ws.close();
    await closed;
    await eventually('the bridge gone', async () => ((await bridges()) === '0' ? true : undefined));
  });

  it("has no screen once the VPS stops: its open screen closes, and a ticket is the local substrate's 404", async () => {
    const machine = vps.primaryResourceId;
    const path = { id: vps.serviceInstanceId, resource_id: machine };
    const rfb = new RfbClient(await openScreenSocket(await owner.api.screenTicketCreate({ path, query: { force: true } })));
    await rfb.handshake();
    const closed = closeOf(rfb.ws);
    const stop = await owner.api.serviceInstancePower({ path: { id: vps.serviceInstanceId }, body: { action: 'stop' } });
    expect(await awaitOperation(owner.api, vps.serviceInstanceId, stop.operation_id, 90_000)).toMatchObject({
      status: 'succeeded',
    });
    expect((await findInstance(lxd, instanceOf(vps)))?.status).toBe('Stopped');
    // The agent's screen ended with the machine, and the viewer's socket with it.
    expect((await closed).code).toBe(1000);
    const tickets = (await app.sql`select 1 from gateway_tickets where purpose = 'screen'`).length;
    const err = await refusal(owner.api.screenTicketCreate({ path, query: { force: true } }));
    expect([err.status, err.code]).toEqual([404, 'not-found']);
    expect(err.detail).toMatch(/is stopped.*Start it first/);
    expect((await app.sql`select 1 from gateway_tickets where purpose = 'screen'`).length).toBe(tickets);
    expect(await app.substrate!.openScreen(machine)).toBeNull();
  }, 150_000);

  it("attaches to a workload's console through a gateway ticket: its scrollback, then its answers", async () => {
    const arena = await provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' });
    // The agent starts the program once it has acknowledged its contract: until then, no console.
    const reader = await eventually('the console', async () => {
      try {
        return new ConsoleReader(await owner.api.openConsole(arena.serviceInstanceId, arena.primaryResourceId));
      } catch {
        return undefined;
      }
    });
    // The unit image carries Debian's ioq3ded: its own console, which answers `status` with the map.
    await reader.waitFor('Server Initialization');
    reader.ws.send(Buffer.from('status\n'));
    await reader.waitFor('map: tiny');
    // The program reads what was sent inside its container: the bridge runs there, not on this host.
    const bridges = async () =>
      (await execIn(lxd, instanceOf(arena), ['sh', '-c', "ps -o args | grep -c '[c]onsole.json'"], { output: true })).stdout.trim();
    expect(await bridges()).toBe('1');
    const closed = closeOf(reader.ws);
    reader.ws.close();
    await closed;
    await eventually('the bridge gone', async () => ((await bridges()) === '0' ? true : undefined));
  });

  it('runs a shell in the container through a gateway ticket: its size, a resize, its exit code', async () => {
    const ws = await owner.api.openShell(site.serviceInstanceId, site.primaryResourceId, { columns: 80, rows: 24 });
    let text = '';
    const controls: unknown[] = [];
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) text += data.toString('utf8');
      else controls.push(JSON.parse(data.toString('utf8')));
    });
    const closed = closeOf(ws);
    const type = (line: string) => ws.send(Buffer.from(`${line}\n`));
    type('stty size');
    await eventually('the first size', async () => (/^24 80\r?$/m.test(text) ? true : undefined));
    resizeShell(ws, 132, 50);
    // What the shell writes lands on the volume the unit sees, and the shell is the container's own.
    type('stty size; echo from-shell > made-by-shell.txt; cat /etc/hostname 2>/dev/null || hostname');
    await eventually('the second size', async () => (/^50 132\r?$/m.test(text) ? true : undefined));
    // The host name comes after the size: on a loaded machine, not always in the same read.
    await eventually('the host name', async () => (text.includes(instanceOf(site)) ? true : undefined));
    type('exit 3');
    expect((await closed).code).toBe(1000);
    expect(controls).toEqual([
      { type: 'exit', code: 3 },
      { type: 'session_end', reason: 'exited' },
    ]);
    expect((await inSite(`cat ${volumeDirIn(site.volumeResourceId)}/made-by-shell.txt`)).stdout).toBe('from-shell\n');
    // The shell is gone from the container with its session.
    expect((await inSite('ps -o args')).stdout).not.toMatch(/^\/bin\/sh$/m);
  });

  it("writes and reads a volume's files through the file routes, seen and changeable inside the container", async () => {
    const at = { id: site.serviceInstanceId, resource_id: site.volumeResourceId };
    const written = await owner.api.fileWrite({ path: at, query: { path: '/conf/site.txt' }, body: { content: 'from the API\n' } });
    expect(written).toMatchObject({ kind: 'file', path: '/conf/site.txt', size_bytes: 13 });
    const volume = volumeDirIn(site.volumeResourceId);
    expect((await inSite(`cat ${volume}/conf/site.txt`)).stdout).toBe('from the API\n');
    // Owned by the container's root: its programs change what the platform wrote, where it made it.
    expect((await inSite(`echo from the container >> ${volume}/conf/site.txt && touch ${volume}/conf/new && echo ok`)).stdout).toBe('ok\n');
    expect(await owner.api.fileRead({ path: at, query: { path: '/conf/site.txt' } })).toMatchObject({
      content: 'from the API\nfrom the container\n',
    });
    const listing = await owner.api.fileList({ path: { id: site.serviceInstanceId, resource_id: site.primaryResourceId }, query: { path: '/conf' } });
    expect(listing.entries.map((e) => e.name).sort()).toEqual(['new', 'site.txt']);
  });

  it('runs the block game from the image: a real client joins through the edge, the roster and actions over RCON', async () => {
    const game = await provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' });
    const inGame = (command: string) => execIn(lxd, instanceOf(game), ['sh', '-c', command], { output: true });
    const roster = () => owner.api.gameRosterGet({ path: { id: game.serviceInstanceId }, query: {} });
    // The server loads its world after the unit starts: the roster is unreachable until its RCON is up.
    expect(await eventually('the roster', async () => {
      const answer = await roster();
      return answer.status === 'ok' ? answer : undefined;
    }, 120_000)).toMatchObject({ status: 'ok', online: [], ops: [], banned: [], max_players: 20 });
    expect((await inGame('ps -o args')).stdout).toContain('/usr/bin/node /opt/svc/server/src/workloads/block-game.mjs');
    // flying-squid from the image's pruned node_modules: the served version's game data only.
    const data = '/opt/svc/node_modules/minecraft-data/minecraft-data/data/pc';
    expect((await inGame(`ls ${data}/1.21.4/blocks.json; ls -d ${data}/1.8 2>&1`)).stdout).toMatch(
      /^\/opt\/svc\/.*\/1\.21\.4\/blocks\.json\nls: .*1\.8: No such file or directory\n$/,
    );

    await edge.caughtUp();
    const { allocations } = await owner.api.externalAccessGet({ path: { id: game.serviceInstanceId } });
    const primary = allocations.find((a) => a.is_primary)!;
    expect(allocations.map((a) => [a.internal_port, a.protocol])).toEqual([[25565, 'tcp']]);
    const alice = mineflayer.createBot({
      host: primary.external_ip,
      port: primary.external_port,
      username: 'Alice',
      version: MINECRAFT_VERSION,
      auth: 'offline',
    });
    bots.push(alice);
    await new Promise<void>((resolve, reject) => {
      alice.once('spawn', () => resolve());
      alice.once('error', reject);
      alice.once('kicked', (reason) => reject(new Error(`kicked: ${JSON.stringify(reason)}`)));
      alice.once('end', (reason) => reject(new Error(`ended: ${reason}`)));
    });
    expect((await roster()).online).toEqual([{ name: 'Alice', uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    expect(
      await owner.api.gameActionRun({
        path: { id: game.serviceInstanceId },
        body: { kind: 'give', name: 'Alice', item: 'minecraft:diamond', count: 3 },
      }),
    ).toEqual({ status: 'ok' });
    await expect.poll(() => alice.inventory.items().map((i) => [i.name, i.count])).toEqual([['diamond', 3]]);
  }, 240_000);
});
