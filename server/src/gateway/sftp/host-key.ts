// The SSH host key of the SFTP server: one Ed25519 key for every gateway, so a client's known_hosts
// holds whichever gateway answers and across restarts. Made by whoever needs it first (a gateway
// starting, or the API answering the account's fingerprint); two making it at once both insert with
// `on conflict do nothing` and both read back the one row that won. The private half is sealed.
import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import type { Db } from '../../db/client.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { ed25519KeyPair } from '../../ssh/ed25519.js';

export interface HostKey {
  /** OpenSSH private key text, for ssh2's Server (gateway only). */
  privateKey: string;
  /** `SHA256:` + unpadded base64 of the public key blob, as `ssh-keygen -lf` prints it. */
  fingerprint: string;
}

export function fingerprintOf(publicBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicBlob).digest('base64').replace(/=+$/, '')}`;
}

async function ensureRow(
  db: Db,
  box: SecretBox,
  now: Date,
): Promise<{ sealed: string; fingerprint: string }> {
  const read = async () =>
    (
      await db<{ sealed: string; fingerprint: string }[]>`
      select private_key_sealed as sealed, fingerprint from sftp_host_keys where id = 1`
    )[0];
  const existing = await read();
  if (existing) return existing;
  const pair = ed25519KeyPair();
  const parsed = ssh2.utils.parseKey(pair.private);
  if (parsed instanceof Error) throw parsed;
  const fingerprint = fingerprintOf(parsed.getPublicSSH());
  const sealed = await box.seal('sftp-host-key', pair.private);
  await db`
    insert into sftp_host_keys (id, private_key_sealed, fingerprint, created_at)
    values (1, ${sealed}, ${fingerprint}, ${now}) on conflict (id) do nothing`;
  return (await read())!;
}

export async function hostKeyFingerprint(db: Db, box: SecretBox, now: Date): Promise<string> {
  return (await ensureRow(db, box, now)).fingerprint;
}

export async function hostKey(db: Db, box: SecretBox, now: Date): Promise<HostKey> {
  const row = await ensureRow(db, box, now);
  return { privateKey: await box.openText('sftp-host-key', row.sealed), fingerprint: row.fingerprint };
}
