// OpenSSH one-line public keys (`type base64 [comment]`, sshd(8) AUTHORIZED_KEYS FORMAT without options),
// checked down to their blob: a line whose blob names another type, holds a point of another curve or an
// RSA modulus under 2048 bits is refused (DECISIONS.md §8 "VPS access"). Pure: table-tested beside it.
import { createHash } from 'node:crypto';

export interface SshKey {
  name: string;
  type: string;
  fingerprint: string;
  /** `type base64`, the comment left out: what is written into authorized_keys. */
  public_key: string;
}

export const MIN_RSA_BITS = 2048;

/** The ECDSA curves OpenSSH offers, with the size of an uncompressed point on each (SEC1 0x04 || X || Y). */
const ECDSA_POINT_BYTES: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 };

const SUPPORTED = /^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa)$/;

/** Parses one key; the answer is the key, or why it is refused (a sentence for the caller). */
export function parseSshKey(line: string, name?: string): SshKey | string {
  if (/[\r\n]/.test(line.trim())) return 'must be one line';
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2 || parts[0] === '')
    return 'must be one OpenSSH public key line: "type base64 [comment]"';
  const [type, encoded] = parts as [string, string];
  if (!SUPPORTED.test(type))
    return 'unsupported key type: use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa';
  const comment = parts.slice(2).join(' ');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return 'the key is not base64';
  const blob = Buffer.from(encoded, 'base64');
  const problem = checkBlob(type, blob);
  if (problem) return problem;
  return {
    name: name ?? (comment || type),
    type,
    fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
    public_key: `${type} ${blob.toString('base64')}`,
  };
}

function checkBlob(type: string, blob: Buffer): string | null {
  const fields = sshFields(blob);
  if (!fields || fields[0]?.toString('latin1') !== type) return 'the key data does not match its type';
  if (type === 'ssh-ed25519')
    return fields.length === 2 && fields[1]!.length === 32 ? null : 'not an Ed25519 key';
  if (type.startsWith('ecdsa-sha2-')) {
    const curve = type.slice('ecdsa-sha2-'.length);
    const size = ECDSA_POINT_BYTES[curve];
    if (size === undefined) return `unsupported ECDSA curve ${curve}`;
    const ok =
      fields.length === 3 &&
      fields[1]!.toString('latin1') === curve &&
      fields[2]!.length === size &&
      fields[2]![0] === 4;
    return ok ? null : `not an ECDSA ${curve} key`;
  }
  if (type === 'ssh-rsa') {
    if (fields.length !== 3) return 'not an RSA key';
    const bits = bitLength(fields[2]!);
    return bits >= MIN_RSA_BITS
      ? null
      : `RSA keys must have ${MIN_RSA_BITS} bits or more (this one has ${bits})`;
  }
  return 'unsupported key type: use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa';
}

/** The blob's length-prefixed fields (RFC 4251 §5 `string`/`mpint`); null when it does not split exactly. */
function sshFields(blob: Buffer): Buffer[] | null {
  const fields: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length || fields.length > 8) return null;
    const length = blob.readUInt32BE(at);
    if (at + 4 + length > blob.length) return null;
    fields.push(blob.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return fields;
}

/** Bits of an mpint's value (leading zero bytes, the sign padding, do not count). */
function bitLength(mpint: Buffer): number {
  let i = 0;
  while (i < mpint.length && mpint[i] === 0) i++;
  if (i === mpint.length) return 0;
  return (mpint.length - i - 1) * 8 + (32 - Math.clz32(mpint[i]!));
}
