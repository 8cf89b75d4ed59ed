// What lets someone into a machine (DECISIONS.md §8 "VPS access"), as the platform hands it to a driver:
// root's authorized keys and, while one is set, root's password as digests only. The password itself is
// shown to the customer once and never reaches the substrate, the queue or the database.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { spawn } from 'node:child_process';

export interface ScryptDigest {
  algorithm: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  hash: string;
}

export interface MachinePasswordDigest {
  /** crypt(3)'s SHA-512 form (`$6$...`), for the machine's /etc/shadow, which OpenSSH's sshd checks. */
  shadow: string;
  /** For an SSH server of the platform's own (the LXD agent's), which has no crypt(3). */
  scrypt: ScryptDigest;
}

export interface MachineCredentials {
  /** OpenSSH one-line public keys (`type base64`), root's authorized_keys in this order. */
  authorizedKeys: string[];
  /** root's password; null: password sign-in is off. */
  password: MachinePasswordDigest | null;
}

export const NO_CREDENTIALS: MachineCredentials = { authorizedKeys: [], password: null };

// The password is 144 random bits, so no work factor is needed against guessing it; scrypt at its usual
// cost (16 MiB, tens of ms) is kept so a digest never becomes a cheap oracle if passwords change source.
const SCRYPT = { N: 2 ** 14, r: 8, p: 1 };
const KEY_BYTES = 32;

/** A new root password: 144 bits from the CSPRNG as 24 base64url characters a person can still type. */
export function newMachinePassword(): string {
  return randomBytes(18).toString('base64url');
}

export async function machinePasswordDigest(password: string): Promise<MachinePasswordDigest> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, SCRYPT);
  return {
    shadow: await cryptSha512(password),
    scrypt: { algorithm: 'scrypt', ...SCRYPT, salt: salt.toString('base64'), hash: hash.toString('base64') },
  };
}

export async function passwordMatches(digest: ScryptDigest, password: string): Promise<boolean> {
  if (digest.algorithm !== 'scrypt') return false;
  const want = Buffer.from(digest.hash, 'base64');
  const got = await derive(password, Buffer.from(digest.salt, 'base64'), {
    N: digest.N,
    r: digest.r,
    p: digest.p,
  });
  return got.length === want.length && timingSafeEqual(got, want);
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

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Credentials that crossed a wire (the LXD volume server's calls), checked to be that shape. */
export function credentialsOf(value: unknown): MachineCredentials {
  const v = value as Partial<MachineCredentials> | null;
  const keys = v?.authorizedKeys;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string' && !/[\r\n]/.test(k))) {
    throw new Error('credentials: authorizedKeys must be single-line strings');
  }
  const p = v?.password;
  if (
    p !== null &&
    (typeof p?.shadow !== 'string' || !/^\$6\$[^:\n]+$/.test(p.shadow) || p.scrypt?.algorithm !== 'scrypt')
  ) {
    throw new Error('credentials: password must be null or a digest');
  }
  return { authorizedKeys: keys, password: p ?? null };
}
