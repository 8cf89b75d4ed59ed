// Operating-system images on the local substrate: not real disks, but a small root filesystem that says
// what was installed, in the files a real system would (/etc/os-release) and one of the platform's own
// (/etc/svc-image). Which ids may be installed is the catalog's decision (PostgreSQL), not the driver's:
// any well-formed id installs.
import { mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { readIfPresent, removeWriteLeftovers, writeFileAtomic } from './atomic-file.js';
import { IMAGE_FILE, ROOTFS, type LocalLayout } from './layout.js';
import { assertInsideVolume, existingVolume } from './volumes.js';

const IMAGE_ID = /^[a-z0-9]+([.-][a-z0-9]+)*$/;

// Families whose usual name is not the id title-cased.
const FAMILY_NAMES: Record<string, string> = {
  debian: 'Debian GNU/Linux',
  ubuntu: 'Ubuntu',
  rocky: 'Rocky Linux',
  almalinux: 'AlmaLinux',
  'centos-stream': 'CentOS Stream',
  fedora: 'Fedora Linux',
  alpine: 'Alpine Linux',
  archlinux: 'Arch Linux',
  'opensuse-leap': 'openSUSE Leap',
};

export interface OsRelease {
  id: string;
  versionId: string | null;
  name: string;
  prettyName: string;
}

/** What /etc/os-release says for an image id: the family up to the first part that starts with a digit. */
export function osRelease(imageId: string): OsRelease {
  checkImageId(imageId);
  const parts = imageId.split('-');
  const at = parts.findIndex((part) => /^[0-9]/.test(part));
  const id = at > 0 ? parts.slice(0, at).join('-') : imageId;
  const versionId = at > 0 ? parts.slice(at).join('-') : null;
  const name = FAMILY_NAMES[id] ?? titleCase(id);
  return { id, versionId, name, prettyName: versionId === null ? name : `${name} ${versionId}` };
}

export function osReleaseText(imageId: string): string {
  const release = osRelease(imageId);
  // Values come from IMAGE_ID's alphabet (and the names above): nothing to escape inside the quotes.
  const lines = [`NAME="${release.name}"`, `ID=${release.id}`];
  if (release.versionId !== null) lines.push(`VERSION_ID="${release.versionId}"`);
  lines.push(`PRETTY_NAME="${release.prettyName}"`);
  return `${lines.join('\n')}\n`;
}

const HOST_ALTERNATIVES = '/etc/alternatives';

export async function installImage(layout: LocalLayout, volumeId: string, imageId: string): Promise<void> {
  checkImageId(imageId);
  const volume = await existingVolume(layout, volumeId);
  const rootfs = join(volume, ROOTFS);
  // Only etc/ is written into; the other directories are made when missing and left as they are.
  await assertInsideVolume(volume, join(rootfs, 'etc', 'os-release'));
  await mkdir(join(rootfs, 'etc'), { recursive: true, mode: 0o755 });
  await mkdir(join(rootfs, 'root'), { recursive: true, mode: 0o700 });
  await mkdir(join(rootfs, 'home'), { recursive: true, mode: 0o755 });
  await mkdir(join(rootfs, 'tmp'), { recursive: true, mode: 0o755 });
  // A resumed install (its first run killed mid-write) clears what that run left before writing again.
  await removeWriteLeftovers(join(rootfs, 'etc', 'os-release'));
  await removeWriteLeftovers(join(volume, IMAGE_FILE));
  await writeFileAtomic(join(rootfs, 'etc', 'os-release'), osReleaseText(imageId), 0o644);
  await copyAlternatives(join(rootfs, 'etc', 'alternatives'));
  // Last: an interrupted install does not claim to be one.
  await writeFileAtomic(join(volume, IMAGE_FILE), `${imageId}\n`, 0o644);
}

export async function installedImage(layout: LocalLayout, volumeId: string): Promise<string | null> {
  return readImageFile(layout.volumeDir(volumeId));
}

/** The image id written on a volume, or null; the agent reports it for its machine. */
export async function readImageFile(volumeDir: string): Promise<string | null> {
  const text = await readIfPresent(join(volumeDir, IMAGE_FILE));
  const id = text?.trim() ?? '';
  return IMAGE_ID.test(id) ? id : null;
}

function checkImageId(imageId: string): void {
  if (!IMAGE_ID.test(imageId))
    throw new Error(`invalid image id ${JSON.stringify(imageId)}: expected ${String(IMAGE_ID)}`);
}

function titleCase(id: string): string {
  return id
    .split(/[-.]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/**
 * The image's userland is this host's /usr, whose program names (awk, editor, Xvnc...) are links through
 * /etc/alternatives: the machine's /etc gets the same links, as the packages' install would have made.
 * Links the machine already has (its owner changed them) are kept.
 */
async function copyAlternatives(into: string): Promise<void> {
  const names = await readdir(HOST_ALTERNATIVES).catch(() => [] as string[]);
  await mkdir(into, { recursive: true, mode: 0o755 });
  for (const name of names) {
    const target = await readlink(join(HOST_ALTERNATIVES, name)).catch(() => null);
    if (target === null) continue;
    await symlink(target, join(into, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
}
