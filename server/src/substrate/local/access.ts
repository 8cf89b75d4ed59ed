// Login material of a local machine (DECISIONS.md §8 "VPS access"; seed §3 "old credentials cleared").
// The platform's desired credentials are written into the machine's own files, which its sshd reads at
// each attempt: root's ~/.ssh/authorized_keys and root's line of /etc/shadow (`*`: no password). The
// access file beside them keeps an scrypt digest for an SSH server of the platform's own (the LXD agent's).
// What is written is given to the volume root's owner, the machine's mapped root: sshd's StrictModes
// refuses keys in files its root does not own.
import { chown, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { MachineCredentials, ScryptDigest } from '../machine-credentials.js';
import { credentialsOf, passwordMatches } from '../machine-credentials.js';
import { readIfPresent, writeFileAtomic, writeJsonAtomic } from './atomic-file.js';
import { ROOTFS, type LocalLayout } from './layout.js';
import { assertInsideVolume, existingVolume, insideVolume } from './volumes.js';

/** Where the machine's access is recorded, relative to the volume. */
export const ACCESS_FILE = join(ROOTFS, 'etc', 'svc-access.json');
export const AUTHORIZED_KEYS = join(ROOTFS, 'root', '.ssh', 'authorized_keys');

/**
 * What holds credentials on a machine's volume, relative to it: authorized keys (root's and every user's
 * ~/.ssh), password hashes (shadow files), the platform's access file, and the SSH host keys (a fresh
 * install has fresh ones, and a private key left behind is a secret left behind).
 */
const CREDENTIAL_PATHS = [
  join(ROOTFS, 'root', '.ssh'),
  ACCESS_FILE,
  join(ROOTFS, 'etc', 'shadow'),
  join(ROOTFS, 'etc', 'shadow-'),
  join(ROOTFS, 'etc', 'gshadow'),
  join(ROOTFS, 'etc', 'gshadow-'),
];
const HOME = join(ROOTFS, 'home');
const SHADOW = join(ROOTFS, 'etc', 'shadow');
const SSH_CONFIG = join(ROOTFS, 'etc', 'ssh');

const USERNAME = 'root';

interface AccessFile {
  unitId: string;
  username: string;
  password: ScryptDigest | null;
  updatedAt: string;
}

/** The vm_access step: every credential on the volume removed, then only the platform's written. */
export async function resetMachineAccess(
  layout: LocalLayout,
  unitId: string,
  volumeId: string,
  credentials: MachineCredentials,
): Promise<void> {
  const volume = await existingVolume(layout, volumeId);
  for (const path of await credentialPaths(volume)) {
    if (await insideVolume(volume, path)) await rm(path, { recursive: true, force: true });
  }
  await writeMachineAccess(layout, unitId, volumeId, credentials);
}

/** Makes the machine's keys and root password what the platform holds; the rest of its files stay. */
export async function writeMachineAccess(
  layout: LocalLayout,
  unitId: string,
  volumeId: string,
  given: MachineCredentials,
): Promise<void> {
  // Checked again here: a key with a newline, or a hash with a colon, would write lines of its own.
  const credentials = credentialsOf(given);
  const volume = await existingVolume(layout, volumeId);
  const owner = await stat(volume);
  const give = async (path: string) => {
    if (owner.uid !== 0) await chown(path, owner.uid, owner.gid);
  };
  await ownedDir(volume, join(ROOTFS, 'etc'), 0o755, give);
  await ownedDir(volume, join(ROOTFS, 'root'), 0o700, give);
  await ownedDir(volume, dirname(AUTHORIZED_KEYS), 0o700, give);

  const keys = join(volume, AUTHORIZED_KEYS);
  await assertInsideVolume(volume, keys);
  await writeFileAtomic(keys, credentials.authorizedKeys.map((k) => `${k}\n`).join(''), 0o600);
  await give(keys);

  const record: AccessFile = {
    unitId,
    username: USERNAME,
    password: credentials.password?.scrypt ?? null,
    updatedAt: new Date().toISOString(),
  };
  await assertInsideVolume(volume, join(volume, ACCESS_FILE));
  await writeJsonAtomic(join(volume, ACCESS_FILE), record, 0o600);
  await writeShadow(volume, credentials.password?.shadow ?? '*', give);
}

/** Whether the machine on the volume accepts this password (for the LXD agent's SSH server, and tests). */
export async function checkMachineAccess(
  volumeDir: string,
  username: string,
  password: string,
): Promise<boolean> {
  const text = await readIfPresent(join(volumeDir, ACCESS_FILE));
  if (text === null) return false;
  const record = JSON.parse(text) as AccessFile;
  if (record.username !== username || !record.password) return false;
  return passwordMatches(record.password, password);
}

/** root's authorized keys as the machine holds them (lines), for an SSH server of the platform's own. */
export async function machineAuthorizedKeys(volumeDir: string): Promise<string[]> {
  const path = join(volumeDir, AUTHORIZED_KEYS);
  if (!(await insideVolume(volumeDir, path))) return [];
  const text = await readIfPresent(path);
  return (text ?? '').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

/**
 * root's line of the machine's /etc/shadow, which its sshd checks passwords against (crypt(3)'s SHA-512
 * form, which the image's libcrypt reads); the other accounts' lines stay as the machine has them.
 */
async function writeShadow(
  volume: string,
  hash: string,
  give: (path: string) => Promise<void>,
): Promise<void> {
  const path = join(volume, SHADOW);
  await assertInsideVolume(volume, path);
  const others = ((await readIfPresent(path)) ?? '')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('root:'));
  await writeFileAtomic(path, [`root:${hash}:19000:0:99999:7:::`, ...others].join('\n') + '\n', 0o600);
  await give(path);
}

async function ownedDir(
  volume: string,
  relative: string,
  mode: number,
  give: (path: string) => Promise<void>,
): Promise<void> {
  const path = join(volume, relative);
  await assertInsideVolume(volume, path);
  const made = await mkdir(path, { recursive: true, mode });
  if (made !== undefined) await give(path);
}

async function credentialPaths(volume: string): Promise<string[]> {
  const paths = CREDENTIAL_PATHS.map((path) => join(volume, path));
  for (const user of await entries(join(volume, HOME))) paths.push(join(volume, HOME, user, '.ssh'));
  for (const name of await entries(join(volume, SSH_CONFIG))) {
    if (name.startsWith('ssh_host_')) paths.push(join(volume, SSH_CONFIG, name));
  }
  return paths;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}
