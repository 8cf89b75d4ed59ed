// Placement on an LXD cluster (server/src/substrate/lxd/placement.ts): without LXD_TARGET, each new volume
// goes to the online member that rendezvous hashing of its name picks, so volumes spread over the members
// and a second ensureVolume (a retried job) finds the one it made; with a target, every volume goes there.
// Runs where the test setup started an LXD cluster (LXD installed, root).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { createLxdDriver } from '../../server/src/substrate/lxd/driver.js';
import { clusterMembers, rendezvous } from '../../server/src/substrate/lxd/placement.js';
import { findVolume } from '../../server/src/substrate/lxd/volumes.js';

const lxdUrl = inject('lxdUrl');
const pool = { name: 'default' };

describe.skipIf(!lxdUrl)('placement of new volumes on an LXD cluster', () => {
  const connection = { url: lxdUrl ?? 'unix:/nowhere', project: 'default' };
  const client = new LxdClient(connection);
  const prefix = `tp${randomUUID().slice(0, 6)}-`;
  let dataDir: string;
  const made: { driver: SubstrateDriver; id: string }[] = [];
  const driver = (target?: string) =>
    createLxdDriver({ connection, pool: 'default', prefix, dataDir, ...(target ? { target } : {}) });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-lxd-placement-'));
  });
  afterAll(async () => {
    for (const { driver: d, id } of made) await d.deleteVolume(id).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  const locationOf = async (id: string) => (await findVolume(client, pool, `${prefix}${id}`))?.location;

  it('spreads volumes over the online members as rendezvous hashing says, and a retry finds the same one', async () => {
    const members = await clusterMembers(client);
    expect(members?.map((m) => m.status)).toEqual(['Online', 'Online']);
    const names = members!.map((m) => m.name);
    // Volume ids until each member is the choice of at least one (the hash decides, not the test).
    const ids: string[] = [];
    while (names.some((n) => !ids.some((id) => rendezvous(names, `${prefix}${id}`) === n)))
      ids.push(randomUUID());
    const d = driver();
    await Promise.all(
      ids.map(async (id) => {
        made.push({ driver: d, id });
        await d.ensureVolume({ id, sizeGb: 1 });
      }),
    );
    const locations = await Promise.all(ids.map(locationOf));
    expect(locations).toEqual(ids.map((id) => rendezvous(names, `${prefix}${id}`)));
    expect(new Set(locations)).toEqual(new Set(names));
    // Asked again (a job that died after the create), nothing new is made anywhere.
    await d.ensureVolume({ id: ids[0]!, sizeGb: 1 });
    const { metadata: all } = await client.call<{ name: string }[]>(
      'GET',
      '/1.0/storage-pools/default/volumes/custom',
      undefined,
      { recursion: '1' },
    );
    expect(all.filter((v) => v.name === `${prefix}${ids[0]}`)).toHaveLength(1);
  });

  it('puts every volume on the configured member when LXD_TARGET names one', async () => {
    const names = (await clusterMembers(client))!.map((m) => m.name);
    for (const target of names) {
      const d = driver(target);
      // An id the hash would send elsewhere: the target still decides.
      let id = randomUUID();
      while (rendezvous(names, `${prefix}${id}`) === target) id = randomUUID();
      made.push({ driver: d, id });
      await d.ensureVolume({ id, sizeGb: 1 });
      expect(await locationOf(id)).toBe(target);
    }
  });
});
