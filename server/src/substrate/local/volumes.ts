// Volumes of the local substrate: directories under DATA_DIR/volumes, private to the platform's user.
// No size limit is enforced here (a directory has no quota without root); VolumeSpec.sizeGb is the
// catalog's promise, kept by the Kubernetes driver's storage class.
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { VolumeSpec } from '../driver.js';
import type { LocalLayout } from './layout.js';

export async function ensureVolume(layout: LocalLayout, volume: VolumeSpec): Promise<void> {
  const dir = layout.volumeDir(volume.id);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode passes through the umask and leaves an existing directory as it was.
  await chmod(dir, 0o700);
}

export async function deleteVolume(layout: LocalLayout, volumeId: string): Promise<void> {
  await rm(layout.volumeDir(volumeId), { recursive: true, force: true });
}

export async function wipeVolume(layout: LocalLayout, volumeId: string): Promise<void> {
  const dir = await existingVolume(layout, volumeId);
  for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
}

/** The volume's directory; a volume that was never made is an error, not something to conjure. */
export async function existingVolume(layout: LocalLayout, volumeId: string): Promise<string> {
  const dir = layout.volumeDir(volumeId);
  try {
    if ((await stat(dir)).isDirectory()) return dir;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  throw new Error(`volume ${volumeId} does not exist`);
}
