// Volumes of the LXD substrate: custom storage volumes of the platform's pool, attached to their unit's
// instance. LXD keeps them and their snapshots. What the platform itself writes on a volume (an image,
// a machine's credentials) it writes where the member keeps the volume, so this slice needs the pool's
// members on this machine with the `dir` driver (a remote cluster's volumes go through LXD's file API:
// not built yet, README).
import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isConflict, isNotFound, type LxdClient } from './client.js';
import { placeVolume } from './placement.js';

export interface VolumeRecord {
  name: string;
  location: string;
  config: Record<string, string>;
}

export interface Pool {
  name: string;
  /** The member new volumes and instances go to (a cluster), or undefined for placement.ts's choice. */
  target?: string;
}

const volumePath = (pool: Pool, name: string) => `/1.0/storage-pools/${pool.name}/volumes/custom/${name}`;

/**
 * The query naming the member that holds the volume: a volume of a `dir` pool lives on one member, and a
 * cluster acts on it only when told which.
 */
export function onMember(volume: VolumeRecord): Record<string, string> | undefined {
  return volume.location && volume.location !== 'none' ? { target: volume.location } : undefined;
}

export async function findVolume(client: LxdClient, pool: Pool, name: string): Promise<VolumeRecord | null> {
  return client.find<VolumeRecord>(volumePath(pool, name));
}

export async function createVolume(
  client: LxdClient,
  pool: Pool,
  name: string,
  sizeGb: number,
): Promise<void> {
  // Members of a cluster each keep their own `dir` volumes: asked again, the volume made is the one.
  if (await findVolume(client, pool, name)) return;
  try {
    await client.run(
      'POST',
      `/1.0/storage-pools/${pool.name}/volumes/custom`,
      { name, config: { size: `${sizeGb}GiB` } },
      await placeVolume(client, name, pool.target).then((target) => (target ? { target } : undefined)),
    );
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

export async function deleteVolume(client: LxdClient, pool: Pool, name: string): Promise<void> {
  const volume = await findVolume(client, pool, name);
  if (!volume) return;
  try {
    await client.run('DELETE', volumePath(pool, name), undefined, onMember(volume));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Where the member holding the volume keeps its files (the `dir` driver's layout). */
export async function volumeHostDir(client: LxdClient, pool: Pool, volume: VolumeRecord): Promise<string> {
  const record = await client.find<{ driver: string; config: Record<string, string> }>(
    `/1.0/storage-pools/${pool.name}`,
    onMember(volume),
  );
  if (!record || record.driver !== 'dir' || !record.config.source)
    throw new Error(`the LXD storage pool ${pool.name} must use the dir driver on this machine`);
  return join(record.config.source, 'custom', `${client.project}_${volume.name}`);
}

/**
 * Gives what the platform wrote as this machine's root to the volume's owner (the instance's root, mapped
 * to an unprivileged id on the host), so the unit's programs own their files.
 */
export async function shiftToVolumeOwner(dir: string): Promise<void> {
  const root = await lstat(dir);
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      const stats = await lstat(full);
      if (stats.uid === 0 || stats.gid === 0) await lchown(full, root.uid, root.gid);
      if (entry.isDirectory()) await walk(full);
    }
  };
  if (root.uid !== 0) await walk(dir);
}
