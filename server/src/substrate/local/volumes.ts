// Volumes of the local substrate: directories under DATA_DIR/volumes, private to the platform's user.
// No size limit is enforced here (a directory has no quota without root); VolumeSpec.sizeGb is the
// catalog's promise, kept by the Kubernetes driver's storage class.
import { releaseVolumeIdRange } from './sandbox/idmap.js';
import { chmod, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { VolumeSpec } from '../driver.js';
import type { LocalLayout } from './layout.js';
import { recoverVolume } from './snapshots.js';

export async function ensureVolume(layout: LocalLayout, volume: VolumeSpec): Promise<void> {
  const dir = layout.volumeDir(volume.id);
  // A restore killed mid-swap left the volume's data beside its name: put it back, never make it empty.
  await recoverVolume(layout, volume.id);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode passes through the umask and leaves an existing directory as it was.
  await chmod(dir, 0o700);
}

export async function deleteVolume(layout: LocalLayout, volumeId: string): Promise<void> {
  await releaseVolumeIdRange(layout.volumeDir(volumeId));
  await rm(layout.volumeDir(volumeId), { recursive: true, force: true });
}

export async function wipeVolume(layout: LocalLayout, volumeId: string): Promise<void> {
  const dir = await existingVolume(layout, volumeId);
  for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
}

/** The volume's directory; a volume that was never made is an error, not something to conjure. */
export async function existingVolume(layout: LocalLayout, volumeId: string): Promise<string> {
  const dir = layout.volumeDir(volumeId);
  await recoverVolume(layout, volumeId);
  try {
    if ((await stat(dir)).isDirectory()) return dir;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  throw new Error(`volume ${volumeId} does not exist`);
}

/**
 * Whether `path` (under the volume) really lies inside it: what a machine's user wrote on the volume may
 * include symlinks (rootfs/home/x -> /), and the driver must not write or delete through them. The last
 * component is not resolved (removing a symlink removes the link).
 */
export async function insideVolume(volumeDir: string, path: string): Promise<boolean> {
  const root = await realpath(volumeDir);
  let parent = dirname(path);
  // The nearest existing ancestor decides: what does not exist yet will be made inside it.
  for (;;) {
    try {
      const real = await realpath(parent);
      return real === root || real.startsWith(root + sep);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === volumeDir) throw err;
      parent = dirname(parent);
    }
  }
}

export async function assertInsideVolume(volumeDir: string, path: string): Promise<void> {
  if (!(await insideVolume(volumeDir, path))) throw new Error(`${path} leads outside its volume`);
}
