// The LXD driver as the contract suite sees it: volumes looked at where their member keeps them, unit
// files read through LXD's file API, processes listed inside each instance (their pids are the instance's).
import { createHash } from 'node:crypto';
import { lchown, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { createLxdDriver } from '../../server/src/substrate/lxd/driver.js';
import { deleteInstance, execIn, readInstanceFile, setState, type Instance } from '../../server/src/substrate/lxd/instances.js';
import { unitDirIn } from '../../server/src/substrate/lxd/paths.js';
import { deleteVolume, findVolume, volumeHostDir } from '../../server/src/substrate/lxd/volumes.js';
import type { Probe, Subject } from './drivers.js';
import { orNull } from './drivers.js';

const pool = { name: 'default' };

export function lxdSubject(url: string): Subject {
  const connection = { url, project: 'default' };
  // Each test's DATA_DIR names its own instances and volumes: tests run side by side on one cluster.
  const prefix = (dataDir: string) => `t${createHash('sha256').update(dataDir).digest('hex').slice(0, 8)}-`;
  return {
    name: 'lxd',
    make: (dataDir) => createLxdDriver({ connection, pool: 'default', prefix: prefix(dataDir), dataDir }),
    probe: (dataDir) => lxdProbe(new LxdClient(connection), prefix(dataDir)),
  };
}

function lxdProbe(client: LxdClient, prefix: string): Probe {
  const instance = (unitId: string) => `${prefix}${unitId}`;
  const hostDir = async (volumeId: string) => {
    const volume = await findVolume(client, pool, `${prefix}${volumeId}`);
    return volume ? volumeHostDir(client, pool, volume) : null;
  };
  const ours = async () =>
    (await client.call<Instance[]>('GET', '/1.0/instances', undefined, { recursion: '1' })).metadata.filter((i) =>
      i.name.startsWith(prefix),
    );
  /** pid and command line of every process of the running instances but PID 1 and the listing itself. */
  const listed = async () => {
    const found: { name: string; pid: number }[] = [];
    for (const i of (await ours()).filter((x) => x.status === 'Running')) {
      const { stdout } = await execIn(client, i.name, ['ps', '-o', 'pid,args'], { output: true });
      for (const line of stdout.split('\n').slice(1)) {
        const match = /^\s*(\d+)\s+(.*)$/.exec(line);
        const [, pid, args] = match ?? [];
        if (!pid || !args || pid === '1' || args.startsWith('ps ') || args.startsWith('sleep ')) continue;
        found.push({ name: i.name, pid: Number(pid) });
      }
    }
    return found;
  };
  return {
    async writeVolumeFile(volumeId, path, content) {
      const root = (await hostDir(volumeId))!;
      const owner = await lstat(root);
      const file = join(root, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      // As a process of the instance would have: owned by the instance's root.
      for (let p = file; p !== root; p = dirname(p)) await lchown(p, owner.uid, owner.gid);
    },
    async readVolumeFile(volumeId, path) {
      const root = await hostDir(volumeId);
      return root ? orNull(readFile(join(root, path), 'utf8')) : null;
    },
    async volumeEntries(volumeId) {
      const root = await hostDir(volumeId);
      return root ? orNull(readdir(root)) : null;
    },
    async appliedContract(unitId) {
      const text = await readInstanceFile(client, instance(unitId), `${unitDirIn(unitId)}/applied/contract.json`).catch(() => null);
      return text ? (JSON.parse(text) as Record<string, unknown>) : null;
    },
    async agentPid(unitId) {
      const text = await readInstanceFile(client, instance(unitId), `${unitDirIn(unitId)}/agent.pid`).catch(() => null);
      const pid = Number(text?.trim());
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    },
    processes: async () => (await listed()).map((p) => p.pid),
    async kill9(pid) {
      for (const p of (await listed()).filter((x) => x.pid === pid)) await execIn(client, p.name, ['kill', '-9', String(pid)]);
    },
    supervisesAgents: true,
    async cleanup() {
      for (const i of await ours()) {
        if (i.status === 'Running') await setState(client, i.name, 'stop', true);
        await deleteInstance(client, i.name);
      }
      const volumes = (await client.call<string[]>('GET', `/1.0/storage-pools/${pool.name}/volumes/custom`)).metadata;
      for (const path of volumes) {
        const name = decodeURIComponent(path.split('?')[0]!.split('/').pop()!);
        if (name.startsWith(prefix)) await deleteVolume(client, pool, name);
      }
    },
  };
}
