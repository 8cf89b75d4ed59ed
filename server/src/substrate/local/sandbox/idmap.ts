// The host ids a local unit runs as (DECISIONS.md §8 "Confinement"): each volume gets a range of 65,536
// host uids and gids of its own, mapped to 0-65535 inside its unit's user namespace, so a unit's root is
// an unprivileged id of this host that no other unit and no host account shares (as LXD's
// `security.idmap.isolated`). The range belongs to the volume, not the unit, because the volume's files
// carry it: a unit made again on the same volume finds its files its own.
//
// Ranges are handed out through a registry shared by everything on this host (several DATA_DIRs, as
// tests have): one file per range, created with O_EXCL and naming the volume directory that holds it. A
// file whose volume directory is gone is stale and may be taken again. The volume's root directory is
// owned by its range's first id, which is how a start finds the range again.
import { createHash } from 'node:crypto';
import { lchown, lstat, mkdir, opendir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const IDMAP_DIR = '/var/lib/svc-units/idmap';
export const RANGE_SIZE = 65_536;
// 2^20: past every id a distribution or an administrator hands out, as LXD and Podman start theirs.
const FIRST_SLOT = 16;
// The last range ends at 2^32 - 65,537, below (uid_t)-1, which means "no id".
const LAST_SLOT = 65_534;

export interface IdRange {
  /** The host id that is 0 inside. */
  base: number;
  size: number;
}

function slotFile(slot: number): string {
  return join(IDMAP_DIR, String(slot));
}

async function holder(slot: number): Promise<string | null> {
  try {
    return (await readFile(slotFile(slot), 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function claim(slot: number, volumeDir: string): Promise<boolean> {
  try {
    await writeFile(slotFile(slot), `${volumeDir}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const owner = await holder(slot);
  if (owner === volumeDir) return true;
  if (owner === null || (await exists(owner))) return false;
  // Stale: its volume is gone. Of two starts reclaiming it at once, one creates the file again.
  await rm(slotFile(slot), { force: true });
  return claim(slot, volumeDir).catch(() => false);
}

/** The volume's range, found from its root's owner or handed out now (its root is then given to it). */
export async function volumeIdRange(volumeDirGiven: string): Promise<IdRange> {
  const volumeDir = await realpath(volumeDirGiven);
  await mkdir(IDMAP_DIR, { recursive: true, mode: 0o700 });
  const { uid } = await stat(volumeDir);
  const owned = uid % RANGE_SIZE === 0 ? uid / RANGE_SIZE : -1;
  if (owned >= FIRST_SLOT && owned <= LAST_SLOT && (await claim(owned, volumeDir))) {
    return { base: owned * RANGE_SIZE, size: RANGE_SIZE };
  }
  const span = LAST_SLOT - FIRST_SLOT + 1;
  const start = createHash('sha256').update(volumeDir).digest().readUInt32BE(0) % span;
  for (let i = 0; i < span; i += 1) {
    const slot = FIRST_SLOT + ((start + i) % span);
    if (await claim(slot, volumeDir)) {
      const base = slot * RANGE_SIZE;
      await lchown(volumeDir, base, base);
      return { base, size: RANGE_SIZE };
    }
  }
  throw new Error('no free id range for the volume');
}

/** Gives the volume's range back (the volume is being deleted). */
export async function releaseVolumeIdRange(volumeDirGiven: string): Promise<void> {
  let volumeDir: string;
  let uid: number;
  try {
    volumeDir = await realpath(volumeDirGiven);
    ({ uid } = await stat(volumeDir));
  } catch {
    return;
  }
  if (uid % RANGE_SIZE !== 0) return;
  const slot = uid / RANGE_SIZE;
  if ((await holder(slot).catch(() => null)) === volumeDir) await rm(slotFile(slot), { force: true });
}

/**
 * Gives every file of the volume that this host's root (or another host id below 65,536) made there, by
 * a restore, a reinstall or a copy, to the matching id of the range, so the unit's root owns what it
 * should; files already in the range are left alone. Symbolic links are changed, never followed.
 */
export async function shiftOwnership(dir: string, range: IdRange): Promise<number> {
  let changed = 0;
  const shift = async (path: string, uid: number, gid: number) => {
    const inRange = (id: number) => id >= range.base && id < range.base + range.size;
    if (inRange(uid) && inRange(gid)) return;
    const to = (id: number) => (inRange(id) ? id : id < range.size ? range.base + id : range.base);
    await lchown(path, to(uid), to(gid));
    changed += 1;
  };
  const walk = async (path: string): Promise<void> => {
    const handle = await opendir(path).catch(() => null);
    if (!handle) return;
    for await (const entry of handle) {
      const child = join(path, entry.name);
      const st = await lstat(child).catch(() => null);
      if (!st) continue;
      await shift(child, st.uid, st.gid);
      if (st.isDirectory()) await walk(child);
    }
  };
  const top = await lstat(dir);
  await shift(dir, top.uid, top.gid);
  await walk(dir);
  return changed;
}
