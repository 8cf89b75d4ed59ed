// The same scenarios on SUBSTRATE=lxd as on the local substrate (issue 34, "LXD parity"): a block game's
// shell sees its volume as `/` (a file the files API wrote at `/` is at `/` in the shell, and the shell's
// writes at `/` are the API's); the arena game's ioq3ded, carried by the unit image, answers live info
// `ok` through the edge; an import cancelled while it runs ends `cancelled`, whether it was copying or
// deleting what the remote does not have (delete_extraneous: thousands of removals on a cluster's volume).
// One LXD project, one app, one service of each game. Runs where the test setup started an LXD cluster
// (LXD installed, root).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { closeOf } from '../consoles/sockets.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startSsh2Sftp, type Ssh2Sftp } from '../support/sftp-server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { deleteInstance } from '../../server/src/substrate/lxd/instances.js';
import { deleteVolume } from '../../server/src/substrate/lxd/volumes.js';
import { eventually } from './drivers.js';

const lxdUrl = inject('lxdUrl');
/** Files a second import deletes: enough that deleting them takes a while (about 0.5 s here). */
const EXTRANEOUS = 1000;

describe.skipIf(!lxdUrl)('LXD parity with the local substrate', () => {
  let app: TestApp;
  let smtp: TestSmtp;
  let edge: TestEdge;
  let sftp: Ssh2Sftp;
  let owner: Caller;
  let blocks: Provisioned;
  let arena: Provisioned;
  // A project of its own: runs sharing the cluster never see (or stop) each other's instances.
  const project = `t${randomUUID().slice(0, 8)}`;
  const lxd = new LxdClient({ url: lxdUrl ?? 'unix:/nowhere', project });
  const remoteDir = join(process.cwd(), '.tmp', `lxd-parity-${randomBytes(4).toString('hex')}`);
  const startImport = (service: string, remotePath: string, deleteExtraneous = false) =>
    owner.api.importStart({
      path: { id: service },
      body: {
        host: '127.0.0.1',
        port: sftp.port,
        username: sftp.username,
        password: sftp.password,
        remote_path: remotePath,
        delete_extraneous: deleteExtraneous,
      },
    });

  beforeAll(async () => {
    await lxd.call('POST', '/1.0/projects', {
      name: project,
      config: {
        'features.images': 'false',
        'features.profiles': 'false',
        'features.storage.volumes': 'true',
      },
    });
    await mkdir(remoteDir, { recursive: true });
    for (const dir of ['big', 'many', 'one']) await mkdir(join(remoteDir, dir));
    await writeFile(join(remoteDir, 'big', 'world.bin'), randomBytes(2 * 1024 * 1024));
    await writeFile(join(remoteDir, 'one', 'kept.txt'), 'kept\n');
    for (let i = 0; i < EXTRANEOUS; i++) await writeFile(join(remoteDir, 'many', `extra-${i}.txt`), `${i}\n`);
    [smtp, sftp] = await Promise.all([startTestSmtp(), startSsh2Sftp(remoteDir)]);
    app = await startTestApp({
      env: {
        SMTP_URL: smtp.url,
        SUBSTRATE: 'lxd',
        LXD_URL: lxdUrl!,
        LXD_PROJECT: project,
        PORT_POOL: randomPortPool(8),
        IMPORT_ALLOWED_NETWORKS: '127.0.0.1/32',
      },
      gateway: true,
    });
    // Imports read the app's clock (the racy-clean rule, the stall watch): the real one here.
    app.clock.followRealTime();
    edge = await startTestEdge(app, { substrate: app.substrate! });
    const staff = await staffMember(app, smtp, 'parity-staff', ['manage_services']);
    owner = await signedIn(app, smtp, 'parity-owner');
    const orgId = (
      await owner.api.organizationCreate({
        body: { name: 'Parity', slug: `parity-${Date.now().toString(36)}` },
      })
    ).id;
    const projectId = (
      await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
    ).id;
    [blocks, arena] = await Promise.all([
      provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Blocks' }),
      provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await edge?.stop();
    await app?.close();
    await Promise.all([smtp?.close(), sftp?.close()]);
    await rm(remoteDir, { recursive: true, force: true });
    // Listed as URLs: /1.0/instances/NAME?project=P.
    const nameOf = (url: string) => url.split('?')[0]!.split('/').pop()!;
    const { metadata: instances } = await lxd.call<string[]>('GET', '/1.0/instances');
    for (const url of instances) await deleteInstance(lxd, nameOf(url));
    const { metadata: volumes } = await lxd.call<string[]>(
      'GET',
      '/1.0/storage-pools/default/volumes/custom',
    );
    for (const url of volumes) await deleteVolume(lxd, { name: 'default' }, nameOf(url));
    await lxd.call('DELETE', `/1.0/projects/${project}`);
  }, 120_000);

  it("shows the block game's volume as `/` in its shell: the files API's `/` is the shell's", async () => {
    const at = { id: blocks.serviceInstanceId, resource_id: blocks.volumeResourceId };
    await owner.api.fileWrite({
      path: at,
      query: { path: '/from-api.txt' },
      body: { content: 'written by the API\n' },
    });
    const ws = await owner.api.openShell(blocks.serviceInstanceId, blocks.primaryResourceId, {
      columns: 80,
      rows: 24,
    });
    let text = '';
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) text += data.toString('utf8');
    });
    const closed = closeOf(ws);
    // What the shell prints is computed, so the echo of the typed line never matches it.
    const line = [
      'cd /tmp; cat /from-api.txt; echo from the shell > /from-shell.txt',
      // The instance's own files (the agent's unit directory) are not in its view; the image's are read-only.
      '[ -e /svc ] || echo "unit-dir-$((0))"',
      'touch /usr/x 2>/dev/null || echo "usr-ro-$((0))"',
      'echo "done-$((6*7))"',
    ].join('; ');
    ws.send(Buffer.from(`${line}\n`));
    await eventually(
      'the shell to answer',
      async () => (text.includes('done-42') ? true : undefined),
      20_000,
    );
    expect(text).toContain('written by the API');
    expect(text).toContain('unit-dir-0');
    expect(text).toContain('usr-ro-0');
    ws.send(Buffer.from('exit 0\n'));
    expect((await closed).code).toBe(1000);
    expect(await owner.api.fileRead({ path: at, query: { path: '/from-shell.txt' } })).toMatchObject({
      content: 'from the shell\n',
    });
  });

  it("reads the arena's live info `ok` from its ioq3ded through the edge", async () => {
    await edge.caughtUp();
    const live = () => owner.api.gameLiveInfoGet({ path: { id: arena.serviceInstanceId } });
    await expect.poll(async () => (await live()).status, { timeout: 60_000, interval: 250 }).toBe('ok');
    expect(await live()).toMatchObject({ status: 'ok', info: { hostname: 'Arena', map: 'tiny' } });
  }, 90_000);

  describe('imports', () => {
    // Imports need the service stopped.
    beforeAll(async () => {
      const service = blocks.serviceInstanceId;
      const stop = await owner.api.serviceInstancePower({ path: { id: service }, body: { action: 'stop' } });
      expect(await awaitOperation(owner.api, service, stop.operation_id, 90_000)).toMatchObject({
        status: 'succeeded',
      });
    }, 120_000);

    it('ends an import cancelled while it copies `cancelled`, never `succeeded`', async () => {
      const service = blocks.serviceInstanceId;
      sftp.readDelayMs = 200;
      try {
        const accepted = await startImport(service, '/big');
        const read = () => owner.api.importGet({ path: { id: service, import_id: accepted.id } });
        await eventually(
          'the copy under way',
          async () => {
            const now = await read();
            return now.status === 'running' && now.bytes_transferred > 0 ? true : undefined;
          },
          60_000,
        );
        const asked = await owner.api.importCancel({ path: { id: service, import_id: accepted.id } });
        expect(asked.cancel_requested).toBe(true);
        const op = await awaitOperation(owner.api, service, accepted.operation_id, 90_000);
        expect(op.status).toBe('cancelled');
        expect(await read()).toMatchObject({ status: 'cancelled', cancel_requested: true, error: null });
      } finally {
        sftp.readDelayMs = 0;
      }
    }, 150_000);

    it('ends an import cancelled while it deletes what the remote does not have `cancelled`', async () => {
      const service = blocks.serviceInstanceId;
      const first = await startImport(service, '/many');
      expect(await awaitOperation(owner.api, service, first.operation_id, 120_000)).toMatchObject({
        status: 'succeeded',
      });
      const accepted = await startImport(service, '/one', true);
      const read = () => owner.api.importGet({ path: { id: service, import_id: accepted.id } });
      // Its one file is copied (the count is written before the deleting starts); then the cancel.
      const seen = await eventually(
        'the copy done, the deleting under way',
        async () => {
          const now = await read();
          if (now.status !== 'running') return now.status === 'preparing' ? undefined : now;
          return now.files_total === 1 && now.files_transferred === 1 ? now : undefined;
        },
        60_000,
      );
      expect(seen.status).toBe('running');
      await owner.api.importCancel({ path: { id: service, import_id: accepted.id } });
      const op = await awaitOperation(owner.api, service, accepted.operation_id, 90_000);
      expect(op.status).toBe('cancelled');
      expect(await read()).toMatchObject({ status: 'cancelled', cancel_requested: true, error: null });
      // What was copied stays.
      const at = { id: service, resource_id: blocks.volumeResourceId };
      expect(await owner.api.fileRead({ path: at, query: { path: '/kept.txt' } })).toMatchObject({
        content: 'kept\n',
      });
    }, 180_000);
  });
});
