// Login material of a local machine (the reinstall's vm_access step, seed §3 "old credentials cleared").
// Every file below that can let someone in is removed, then one fresh root password is set. Only its
// scrypt digest is written to the volume; the caller's answer is the only copy of the password.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chown, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineAccess } from '../driver.js';
import { readIfPresent, writeFileAtomic, writeJsonAtomic } from './atomic-file.js';
import { ROOTFS, type LocalLayout } from './layout.js';
import { assertInsideVolume, existingVolume, insideVolume } from './volumes.js';

/** Where the machine's access is recorded, relative to the volume. */
export const ACCESS_FILE = join(ROOTFS, 'etc', 'svc-access.json');

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
// The password is 144 random bits, so no work factor is needed against guessing it; scrypt at its usual
// cost (16 MiB, tens of ms) is kept so a digest never becomes a cheap oracle if passwords change source.
const SCRYPT: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>> = { N: 2 ** 14, r: 8, p: 1 };
const KEY_BYTES = 32;

interface AccessFile {
  unitId: string;
  username: string;
  password: { algorithm: 'scrypt'; N: number; r: number; p: number; salt: string; hash: string };
  createdAt: string;
}

export async function resetMachineAccess(
  layout: LocalLayout,
  unitId: string,
  volumeId: string,
): Promise<MachineAccess> {
  const volume = await existingVolume(layout, volumeId);
  for (const path of await credentialPaths(volume)) {
    if (await insideVolume(volume, path)) await rm(path, { recursive: true, force: true });
  }

  // 144 bits, base64url: 24 characters a person can still type.
  const password = randomBytes(18).toString('base64url');
  const salt = randomBytes(16);
  const hash = await derive(password, salt, SCRYPT);
  const record: AccessFile = {
    unitId,
    username: USERNAME,
    password: {
      algorithm: 'scrypt',
      ...SCRYPT,
      salt: salt.toString('base64'),
      hash: hash.toString('base64'),
    },
    createdAt: new Date().toISOString(),
  };
  await assertInsideVolume(volume, join(volume, ACCESS_FILE));
  await mkdir(join(volume, ROOTFS, 'etc'), { recursive: true, mode: 0o755 });
  await writeJsonAtomic(join(volume, ACCESS_FILE), record, 0o600);
  await writeShadow(volume, await cryptSha512(password));
  return { username: USERNAME, password };
}

/** Whether the machine on the volume accepts this login (for the gateway's shell, and tests). */
export async function checkMachineAccess(
  volumeDir: string,
  username: string,
  password: string,
): Promise<boolean> {
  const text = await readIfPresent(join(volumeDir, ACCESS_FILE));
  if (text === null) return false;
  const record = JSON.parse(text) as AccessFile;
  if (record.username !== username || record.password.algorithm !== 'scrypt') return false;
  const { N, r, p } = record.password;
  const want = Buffer.from(record.password.hash, 'base64');
  const got = await derive(password, Buffer.from(record.password.salt, 'base64'), { N, r, p });
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * root's entry in the machine's /etc/shadow, which its sshd checks passwords against (crypt(3)'s
 * SHA-512 form, which the image's libcrypt reads); given to the volume's owner, the machine's root.
 */
async function writeShadow(volume: string, hash: string): Promise<void> {
  const path = join(volume, SHADOW);
  await assertInsideVolume(volume, path);
  await writeFileAtomic(path, `root:${hash}:19000:0:99999:7:::\n`, 0o600);
  const owner = await stat(volume);
  if (owner.uid !== 0) await chown(path, owner.uid, owner.gid);
}

/** crypt(3)'s SHA-512 hash of the password, by openssl (the password goes on its stdin, never argv). */
function cryptSha512(password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', ['passwd', '-6', '-stdin'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const hash = out.trim();
      if (code === 0 && hash.startsWith('$6$')) resolve(hash);
      else reject(new Error('openssl could not hash the password'));
    });
    child.stdin.end(`${password}\n`);
  });
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

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}
