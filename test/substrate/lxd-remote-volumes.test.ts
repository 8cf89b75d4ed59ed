// Volumes of an LXD cluster reached over HTTPS (LXD_URL=https://…, a client certificate the cluster
// trusts): the confined file layer runs in the member's volume host instance as a volume server reached
// by exec, never on this machine's view of the member's directories. Through the API and the gateway: a
// web app's files (a link planted by the unit not followed), a download, SFTP, a backup restored while
// the volume is attached to the host, a VPS provisioned and reinstalled (its SSH login works), and an
// ended service's volume gone. The test side looks into the cluster through its unix socket.
import { createHash, randomUUID, webcrypto } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { FileEntry } from 'ssh2';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { sshRun } from '../support/ssh.js';
import { outcome } from '../support/refusal.js';
import { call, signIn } from '../sftp/client.js';
import { startSsh2Sftp, type TestSftp } from '../support/sftp-server.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { deleteInstance, execIn, findInstance } from '../../server/src/substrate/lxd/instances.js';
import { deleteVolume, findVolume } from '../../server/src/substrate/lxd/volumes.js';
import { volumeDirIn } from '../../server/src/substrate/lxd/paths.js';
import { VolumeFiles } from '../../server/src/substrate/local/files/index.js';
import { eventually } from './drivers.js';
import { passwordAccess } from '../support/machine-access.js';

const lxdUrl = inject('lxdUrl');

/** A client certificate and key (PEM), made here: the cluster trusts it through its unix socket. */
async function clientCertificate(): Promise<{ cert: string; key: string; der: string }> {
  x509.cryptoProvider.set(webcrypto as Crypto);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomUUID().replace(/-/g, '').slice(0, 16),
    name: 'CN=svc-remote-volumes-test',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 24 * 3600_000),
    keys,
    signingAlgorithm: algorithm,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim()}\n-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem'), key, der: Buffer.from(cert.rawData).toString('base64') };
}

describe.skipIf(!lxdUrl)('volumes of an LXD cluster reached over HTTPS', () => {
  let app: TestApp;
  let smtp: TestSmtp;
  let staff: Staff;
  let owner: Caller;
  let projectId: string;
  let site: Provisioned;
  let edge: TestEdge;
  let certDir: string;
  let fingerprint: string;
  const project = `t${randomUUID().slice(0, 8)}`;
  const lxd = new LxdClient({ url: lxdUrl ?? 'unix:/nowhere', project });
  const instanceOf = (p: Provisioned) => `svc-${p.primaryResourceId}`;
  const inSite = (command: string) => execIn(lxd, instanceOf(site), ['sh', '-c', command], { output: true });
  const at = () => ({ id: site.serviceInstanceId, resource_id: site.volumeResourceId });

  beforeAll(async () => {
    await lxd.call('POST', '/1.0/projects', {
      name: project,
      config: {
        'features.images': 'false',
        'features.profiles': 'false',
        'features.storage.volumes': 'true',
      },
    });
    const memberDir = dirname(lxdUrl!.slice('unix:'.length));
    const port = Number((await readFile(join(memberDir, 'svc-port'), 'utf8')).trim());
    const made = await clientCertificate();
    fingerprint = createHash('sha256').update(Buffer.from(made.der, 'base64')).digest('hex');
    await lxd.call('POST', '/1.0/certificates', {
      type: 'client',
      name: `svc-test-${project}`,
      certificate: made.der,
    });
    certDir = await mkdtemp(join(tmpdir(), 'svc-lxd-cert-'));
    await writeFile(join(certDir, 'client.crt'), made.cert);
    await writeFile(join(certDir, 'client.key'), made.key, { mode: 0o600 });
    smtp = await startTestSmtp();
    app = await startTestApp({
      env: {
        SMTP_URL: smtp.url,
        SUBSTRATE: 'lxd',
        LXD_URL: `https://127.0.0.1:${port}`,
        LXD_CLIENT_CERT: join(certDir, 'client.crt'),
        LXD_CLIENT_KEY: join(certDir, 'client.key'),
        LXD_SERVER_CERT: join(memberDir, 'cluster.crt'),
        LXD_PROJECT: project,
        PORT_POOL: randomPortPool(8),
        IMPORT_ALLOWED_NETWORKS: '127.0.0.1/32',
      },
      gateway: true,
    });
    edge = await startTestEdge(app, { substrate: app.substrate! });
    staff = await staffMember(app, smtp, 'rv-staff', ['manage_services']);
    owner = await signedIn(app, smtp, 'rv-owner');
    const orgId = (
      await owner.api.organizationCreate({ body: { name: 'Remote', slug: `rv-${Date.now().toString(36)}` } })
    ).id;
    projectId = (
      await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Sites', slug: 'sites' } })
    ).id;
    site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
  }, 300_000);

  afterAll(async () => {
    await edge?.stop();
    await app?.close();
    await smtp?.close();
    const nameOf = (url: string) => url.split('?')[0]!.split('/').pop()!;
    const { metadata: instances } = await lxd.call<string[]>('GET', '/1.0/instances');
    for (const url of instances) {
      await lxd
        .run('PUT', `/1.0/instances/${nameOf(url)}/state`, { action: 'stop', force: true })
        .catch(() => undefined);
      await deleteInstance(lxd, nameOf(url));
    }
    const { metadata: volumes } = await lxd.call<string[]>(
      'GET',
      '/1.0/storage-pools/default/volumes/custom',
    );
    for (const url of volumes) await deleteVolume(lxd, { name: 'default' }, nameOf(url));
    await lxd.call('DELETE', `/1.0/projects/${project}`).catch(() => undefined);
    if (fingerprint) await lxd.call('DELETE', `/1.0/certificates/${fingerprint}`).catch(() => undefined);
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });

  it("writes, lists, reads and deletes a web app's files, changeable by the unit's program", async () => {
    const written = await owner.api.fileWrite({
      path: at(),
      query: { path: '/conf/site.txt' },
      body: { content: 'from the API\n' },
    });
    expect(written).toMatchObject({ kind: 'file', path: '/conf/site.txt', size_bytes: 13 });
    const volume = volumeDirIn(site.volumeResourceId);
    expect((await inSite(`cat ${volume}/conf/site.txt`)).stdout).toBe('from the API\n');
    // Made by the volume host's root, which is the units' mapped root: the unit's program changes it.
    expect(
      (await inSite(`echo from the unit >> ${volume}/conf/site.txt && touch ${volume}/conf/new && echo ok`))
        .stdout,
    ).toBe('ok\n');
    expect(await owner.api.fileRead({ path: at(), query: { path: '/conf/site.txt' } })).toMatchObject({
      content: 'from the API\nfrom the unit\n',
    });
    const listing = await owner.api.fileList({
      path: { id: site.serviceInstanceId, resource_id: site.primaryResourceId },
      query: { path: '/conf' },
    });
    expect(listing.entries.map((e) => e.name).sort()).toEqual(['new', 'site.txt']);
    expect(await outcome(owner.api.fileDelete({ path: at(), query: { path: '/conf' } }))).toEqual([
      409,
      'directory-not-empty',
    ]);
    await owner.api.fileDelete({ path: at(), query: { path: '/conf', recursive: true } });
    expect((await inSite(`ls ${volume}`)).stdout).not.toContain('conf');

    // The layer ran in the member's volume host, with the volume attached there, and nothing else.
    const kept = await findVolume(lxd, { name: 'default' }, `svc-${site.volumeResourceId}`);
    const host = await findInstance(lxd, `svc-volumes-${kept!.location}`);
    const { metadata } = await lxd.call<{ expanded_devices: Record<string, Record<string, string>> }>(
      'GET',
      `/1.0/instances/${host!.name}`,
    );
    expect(host?.status).toBe('Running');
    expect(metadata.expanded_devices[`v-${site.volumeResourceId}`]).toMatchObject({
      type: 'disk',
      path: `/v/${site.volumeResourceId}`,
    });
    expect(
      Object.values(metadata.expanded_devices)
        .map((d) => d.type)
        .sort(),
    ).toEqual(['disk', 'disk']);
    expect(host?.config['environment.SVC_ROLE']).toBe('volumes');
    // Its PID 1 waits and runs nothing else: no agent, no unit directory.
    const inHost = await execIn(
      lxd,
      host!.name,
      ['sh', '-c', 'ls /svc; ps -o args | grep -c "[a]gent/main"'],
      { output: true },
    );
    expect(inHost.stdout).toBe('0\n');
  });

  it('never follows a link the unit planted in its volume', async () => {
    const volume = volumeDirIn(site.volumeResourceId);
    // Inside the unit, / is the container's root: what the link points at is outside the volume.
    await inSite(
      `echo CANARY > /canary.txt; ln -sfn /canary.txt ${volume}/link.txt; ln -sfn / ${volume}/rootlink`,
    );
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/link.txt' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(
      await outcome(owner.api.fileRead({ path: at(), query: { path: '/rootlink/canary.txt' } })),
    ).toEqual([404, 'not-found']);
    expect(
      (await owner.api.fileList({ path: at(), query: { path: '/' } })).entries.map((e) => e.name),
    ).not.toContain('link.txt');
    // A write replaces the link itself; what it pointed at keeps its content.
    await owner.api.fileWrite({ path: at(), query: { path: '/link.txt' }, body: { content: 'replaced\n' } });
    expect(
      (await inSite(`cat /canary.txt; [ -L ${volume}/link.txt ] || echo not-a-link; cat ${volume}/link.txt`))
        .stdout,
    ).toBe('CANARY\nnot-a-link\nreplaced\n');
    expect(
      await outcome(owner.api.fileDelete({ path: at(), query: { path: '/rootlink/canary.txt' } })),
    ).toEqual([404, 'not-found']);
    expect((await inSite('cat /canary.txt')).stdout).toBe('CANARY\n');
  });

  it('downloads a file through a gateway ticket, uploads one through a file session, and measures a file read against the local layer', async () => {
    const volume = volumeDirIn(site.volumeResourceId);
    await inSite(
      `dd if=/dev/urandom of=${volume}/blob.bin bs=1024 count=3000 2>/dev/null; sha256sum ${volume}/blob.bin`,
    );
    const want = (await inSite(`sha256sum ${volume}/blob.bin`)).stdout.split(' ')[0];
    const ticket = await owner.api.fileDownloadTicketCreate({ path: at(), body: { path: '/blob.bin' } });
    const res = await fetch(`${ticket.base_url}/download?token=${ticket.token}`);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(3000 * 1024);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(want);

    // A file session's upload: streamed into a temporary file in the volume, renamed whole; then read back.
    const session = await owner.api.fileSessionTicketCreate({ path: at() });
    const auth = { authorization: `Bearer ${session.token}` };
    const upload = Buffer.alloc(2 * 1024 * 1024 + 5, 7);
    const put = await fetch(`${session.base_url}/files?path=/uploaded.bin`, {
      method: 'PUT',
      headers: auth,
      body: upload,
    });
    expect(put.status).toBe(201);
    expect(await put.json()).toMatchObject({
      kind: 'file',
      path: '/uploaded.bin',
      size_bytes: upload.length,
    });
    expect(
      (await inSite(`wc -c < ${volume}/uploaded.bin; ls -a ${volume} | grep -c svc-upload`)).stdout,
    ).toBe(`${upload.length}\n0\n`);
    const got = await fetch(`${session.base_url}/files?path=/uploaded.bin`, { headers: auth });
    expect(Buffer.from(await got.arrayBuffer()).equals(upload)).toBe(true);

    // Per call: a small file's read through the volume server (pooled session, HTTPS, exec streams)
    // against the same layer on a directory here.
    await owner.api.fileWrite({
      path: at(),
      query: { path: '/small.txt' },
      body: { content: 'x'.repeat(100) },
    });
    const remote = app.substrate!.volumeFiles(site.volumeResourceId)!;
    const dir = await mkdtemp(join(tmpdir(), 'svc-local-read-'));
    const local = new VolumeFiles(dir);
    await local.write('/small.txt', 'x'.repeat(100));
    const time = async (files: { read(p: string): Promise<unknown> }) => {
      await files.read('/small.txt');
      const started = performance.now();
      for (let i = 0; i < 50; i++) await files.read('/small.txt');
      return (performance.now() - started) / 50;
    };
    const [remoteMs, localMs] = [await time(remote), await time(local)];
    await rm(dir, { recursive: true, force: true });
    console.log(`file read per call: remote ${remoteMs.toFixed(2)} ms, local ${localMs.toFixed(3)} ms`);
    expect(remoteMs).toBeGreaterThan(0);
  });

  it('puts, gets and renames files over SFTP', async () => {
    const { username, password, port } = (await owner.api.sftpRotate({
      path: { id: site.serviceInstanceId },
    })) as {
      username: string;
      password: string;
      port: number;
    };
    const session = await signIn(port, username, password);
    try {
      const payload = Buffer.from('over sftp\n'.repeat(50_000));
      await call((cb) => session.sftp.mkdir('/up', cb));
      await call((cb) => session.sftp.writeFile('/up/file.txt', payload, cb));
      expect(await call<Buffer>((cb) => session.sftp.readFile('/up/file.txt', cb))).toEqual(payload);
      const listing = await call<FileEntry[]>((cb) => session.sftp.readdir('/up', cb));
      expect(listing.map((e) => [e.filename, e.attrs.size])).toEqual([['file.txt', payload.length]]);
      await call((cb) => session.sftp.rename('/up/file.txt', '/up/moved.txt', cb));
      expect(await owner.api.fileList({ path: at(), query: { path: '/up' } })).toMatchObject({
        entries: [{ name: 'moved.txt', size_bytes: payload.length }],
      });
      // The link the unit planted is not listed at the root.
      const root = await call<FileEntry[]>((cb) => session.sftp.readdir('/', cb));
      expect(root.map((e) => e.filename)).not.toContain('rootlink');
    } finally {
      session.end();
    }
    expect((await inSite(`wc -c < ${volumeDirIn(site.volumeResourceId)}/up/moved.txt`)).stdout.trim()).toBe(
      '500000',
    );
  });

  it('imports a remote tree into the volume while the unit is stopped; files are served without it', async () => {
    const remote = await mkdtemp(join(tmpdir(), 'svc-import-src-'));
    let source: TestSftp | undefined;
    try {
      await mkdir(join(remote, 'site/assets'), { recursive: true });
      await writeFile(join(remote, 'site/index.html'), '<h1>imported</h1>');
      await writeFile(join(remote, 'site/assets/app.js'), 'console.log(1)');
      await utimes(join(remote, 'site/index.html'), 1_600_000_000, 1_600_000_000);
      source = await startSsh2Sftp(remote);
      const power = async (action: 'start' | 'stop') => {
        const { operation_id } = await owner.api.serviceInstancePower({
          path: { id: site.serviceInstanceId },
          body: { action },
        });
        expect(await awaitOperation(owner.api, site.serviceInstanceId, operation_id, 90_000)).toMatchObject({
          status: 'succeeded',
        });
      };
      await power('stop');
      expect((await findInstance(lxd, instanceOf(site)))?.status).toBe('Stopped');
      const accepted = await owner.api.importStart({
        path: { id: site.serviceInstanceId },
        body: {
          host: '127.0.0.1',
          port: source.port,
          username: source.username,
          password: source.password,
          remote_path: '/site',
        },
      });
      expect(
        await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 120_000),
      ).toMatchObject({
        status: 'succeeded',
      });
      expect(await owner.api.fileRead({ path: at(), query: { path: '/index.html' } })).toMatchObject({
        content: '<h1>imported</h1>',
      });
      expect(await owner.api.fileRead({ path: at(), query: { path: '/assets/app.js' } })).toMatchObject({
        content: 'console.log(1)',
      });
      const listing = await owner.api.fileList({ path: at(), query: { path: '/' } });
      expect(listing.entries.find((e) => e.name === 'index.html')?.modified_at).toBe(
        new Date(1_600_000_000_000).toISOString(),
      );
      await power('start');
      expect((await inSite(`cat ${volumeDirIn(site.volumeResourceId)}/assets/app.js`)).stdout).toBe(
        'console.log(1)',
      );
    } finally {
      await source?.close();
      await rm(remote, { recursive: true, force: true });
    }
  });

  it('restores a backup of a volume attached to the volume host, and its files are served again', async () => {
    await owner.api.fileWrite({
      path: at(),
      query: { path: '/index.html' },
      body: { content: 'version 1\n' },
    });
    const created = await owner.api.backupCreate({ path: at(), body: { name: 'before' } });
    expect(
      await awaitOperation(owner.api, site.serviceInstanceId, created.operation_id, 90_000),
    ).toMatchObject({
      status: 'succeeded',
    });
    await owner.api.fileWrite({
      path: at(),
      query: { path: '/index.html' },
      body: { content: 'version 2\n' },
    });
    await owner.api.fileWrite({ path: at(), query: { path: '/later.txt' }, body: { content: 'later\n' } });
    const restore = await owner.api.backupRestore({ path: { ...at(), backup_id: created.backup.id } });
    expect(
      await awaitOperation(owner.api, site.serviceInstanceId, restore.operation_id, 120_000),
    ).toMatchObject({
      status: 'succeeded',
    });
    expect(await owner.api.fileRead({ path: at(), query: { path: '/index.html' } })).toMatchObject({
      content: 'version 1\n',
    });
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/later.txt' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect((await inSite(`cat ${volumeDirIn(site.volumeResourceId)}/index.html`)).stdout).toBe('version 1\n');
  });

  it('provisions a VPS and reinstalls it through the volume host; its SSH login works', async () => {
    const vps = await provisionService(staff.elevated, {
      projectId,
      productSlug: 'vps-small',
      osImage: 'debian-12',
    });
    const name = `svc-${vps.primaryResourceId}`;
    expect((await findInstance(lxd, name))?.status).toBe('Running');
    const rootfs = `${volumeDirIn(vps.volumeResourceId)}/rootfs`;
    expect(
      (await execIn(lxd, name, ['cat', `${rootfs}/etc/svc-image`], { output: true })).stdout.trim(),
    ).toBe('debian-12');
    await execIn(lxd, name, ['sh', '-c', `echo junk > ${rootfs}/root/left-behind`]);
    const accepted = await owner.api.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
      body: { confirm: true, os_image: 'ubuntu-24.04' },
    });
    expect(
      await awaitOperation(owner.api, vps.serviceInstanceId, accepted.operation_id, 120_000),
    ).toMatchObject({
      status: 'succeeded',
    });
    const after = await execIn(lxd, name, ['sh', '-c', `cat ${rootfs}/etc/svc-image; ls ${rootfs}/root`], {
      output: true,
    });
    expect(after.stdout).toBe('ubuntu-24.04\n');
    expect(await app.substrate!.installedImage(vps.volumeResourceId)).toBe('ubuntu-24.04');

    const [system] = (await owner.api.externalAccessGet({ path: { id: vps.serviceInstanceId } })).allocations;
    await eventually('the proxy device of port 22', async () => {
      const { metadata } = await lxd.call<{ devices: Record<string, Record<string, string>> }>(
        'GET',
        `/1.0/instances/${name}`,
      );
      return metadata.devices['port-tcp-22'];
    });
    const access = await passwordAccess();
    await app.substrate!.setMachineAccess(vps.primaryResourceId, vps.volumeResourceId, access.credentials);
    const login = (password: string) =>
      sshRun({ host: app.config.host, port: system!.external_port, username: access.username, password });
    await edge.caughtUp();
    // One SSH attempt may itself take up to its 10 s ready timeout on a loaded machine: room for several.
    expect(
      await eventually(
        'a login through the edge',
        async () => {
          const out = await login(access.password);
          return out.includes('machine') ? out : undefined;
        },
        60_000,
      ),
    ).toContain(`machine ${vps.primaryResourceId}`);
    expect(await login('not-the-password')).toBe('client-authentication');
  });

  it("removes an ended service's volume, attached to the volume host before", async () => {
    const game = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Gone' });
    await owner.api.fileWrite({
      path: { id: game.serviceInstanceId, resource_id: game.volumeResourceId },
      query: { path: '/x.txt' },
      body: { content: 'x' },
    });
    const volumeName = `svc-${game.volumeResourceId}`;
    const kept = await findVolume(lxd, { name: 'default' }, volumeName);
    const hostName = `svc-volumes-${kept!.location}`;
    const devices = async () =>
      (await lxd.call<{ devices: Record<string, unknown> }>('GET', `/1.0/instances/${hostName}`)).metadata
        .devices;
    expect(Object.keys(await devices())).toContain(`v-${game.volumeResourceId}`);
    expect(await staff.elevated.adminSubscriptionEnd({ path: { id: game.subscriptionId } })).toMatchObject({
      status: 'ended',
    });
    await app.worker!.runDue();
    expect(await findVolume(lxd, { name: 'default' }, volumeName)).toBeNull();
    expect(await findInstance(lxd, instanceOf(game))).toBeNull();
    expect(Object.keys(await devices())).not.toContain(`v-${game.volumeResourceId}`);
  });
});
