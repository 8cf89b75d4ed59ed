// Units get no network of their own on LXD: a project's default profile that carries a NIC (as most
// production profiles do, for a bridge) would otherwise put every unit and the volume host on the
// member's network, past the edge and its firewall. The driver masks the profile's NICs on each instance
// it makes. Tested in a project of its own whose default profile has a real NIC (a p2p veth pair, which
// needs no bridge): the unit and the volume host see only `lo`, while an instance made from the same
// image and profile without the mask sees its `eth0` (the control: the probe does see a NIC when there
// is one).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { UnitSignalSpec } from '../../generated/unit-signal.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { createLxdDriver } from '../../server/src/substrate/lxd/driver.js';
import { execIn, type Instance } from '../../server/src/substrate/lxd/instances.js';
import { eventually } from './drivers.js';

const lxdUrl = inject('lxdUrl');
const tag = randomBytes(3).toString('hex');
const project = `svcnet-${tag}`;
const prefix = `n${tag}-`;

let admin: LxdClient;
let lxd: LxdClient;
let driver: SubstrateDriver;
let dataDir: string;

/** The network interfaces the instance's kernel namespace has, as its processes see them. */
async function interfaces(name: string): Promise<string[]> {
  const { code, stdout } = await execIn(lxd, name, ['ls', '/sys/class/net'], { output: true });
  expect(code).toBe(0);
  return stdout.split(/\s+/).filter(Boolean).sort();
}

describe.skipIf(!lxdUrl)('units on LXD have no network of their own', () => {
  beforeAll(async () => {
    admin = new LxdClient({ url: lxdUrl!, project: 'default' });
    // Images and custom volumes shared with the default project; profiles its own.
    await admin.run('POST', '/1.0/projects', {
      name: project,
      config: {
        'features.profiles': 'true',
        'features.images': 'false',
        'features.storage.volumes': 'false',
      },
    });
    lxd = new LxdClient({ url: lxdUrl!, project });
    await lxd.run('PUT', '/1.0/profiles/default', {
      description: 'a production-like profile: a root disk and a NIC',
      config: {},
      devices: {
        root: { type: 'disk', path: '/', pool: 'default' },
        eth0: { type: 'nic', nictype: 'p2p', name: 'eth0' },
      },
    });
    dataDir = await mkdtemp(join(tmpdir(), 'svc-lxd-net-'));
    driver = createLxdDriver({
      connection: { url: lxdUrl!, project },
      pool: 'default',
      prefix,
      dataDir,
      volumeAccess: 'instance',
    });
  }, 180_000);

  afterAll(async () => {
    await driver?.close({ stopUnits: true }).catch(() => undefined);
    if (lxd) {
      const { metadata } = await lxd.call<Instance[]>('GET', '/1.0/instances', undefined, { recursion: '1' });
      for (const i of metadata) {
        await lxd
          .run('PUT', `/1.0/instances/${i.name}/state`, { action: 'stop', force: true })
          .catch(() => undefined);
        await lxd.run('DELETE', `/1.0/instances/${i.name}`).catch(() => undefined);
      }
      const volumes = await lxd.call<{ name: string; type: string }[]>(
        'GET',
        '/1.0/storage-pools/default/volumes',
        undefined,
        {
          recursion: '1',
        },
      );
      for (const v of volumes.metadata.filter((v) => v.type === 'custom' && v.name.startsWith(prefix)))
        await lxd.run('DELETE', `/1.0/storage-pools/default/volumes/custom/${v.name}`).catch(() => undefined);
    }
    await admin?.run('DELETE', `/1.0/projects/${project}`).catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 180_000);

  it('masks the profile NIC on the unit and the volume host; the same instance without the mask has it', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', {
      unitId: 'unit-1',
      key: 'web',
      contractVersion: 1,
      generation: 1,
    } as UnitSignalSpec);
    await driver.startUnit({
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', 'setInterval(() => {}, 60_000)'],
    });
    const unit = `${prefix}unit-1`;
    await eventually(
      'the unit running',
      async () => ((await driver.unitState('unit-1')) === 'running' ? true : undefined),
      60_000,
    );
    const { metadata: made } = await lxd.call<
      Instance & { expanded_devices: Record<string, Record<string, string>>; config: Record<string, string> }
    >('GET', `/1.0/instances/${unit}`);
    expect(made.expanded_devices.eth0).toEqual({ type: 'none' });
    expect(await interfaces(unit)).toEqual(['lo']);

    // The volume host, made when the volume's files are first reached through the cluster.
    await driver.volumeFiles('vol-1')!.write('/hello.txt', 'hi\n');
    const { metadata: all } = await lxd.call<Instance[]>('GET', '/1.0/instances', undefined, {
      recursion: '1',
    });
    const host = all.find((i) => i.name.startsWith(`${prefix}volumes-`));
    expect(host).toBeDefined();
    expect(await interfaces(host!.name)).toEqual(['lo']);

    // The control: the unit's own image on the same profile, not masked.
    const control = `${prefix}control`;
    await lxd.run(
      'POST',
      '/1.0/instances',
      {
        name: control,
        type: 'container',
        source: { type: 'image', fingerprint: made.config['volatile.base_image'] },
        // The image's init idles as the volume host does, with no agent to start.
        config: { 'environment.SVC_ROLE': 'volumes' },
      },
      { target: made.location },
    );
    await lxd.run('PUT', `/1.0/instances/${control}/state`, { action: 'start' });
    expect(await interfaces(control)).toEqual(['eth0', 'lo']);
  }, 180_000);
});
