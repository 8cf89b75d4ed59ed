// Where the encryption key comes from: ENCRYPTION_KEY (one or more base64 keys, the first sealing),
// else a key made once and kept in DATA_DIR/encryption.key (mode 0600), so `npm start` needs no
// set-up. Production refuses to start without ENCRYPTION_KEY (config.ts).
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { encryptionKey, SecretBox, type EncryptionKey } from './secret-box.js';

export const KEY_FILE = 'encryption.key';

/** The configured keys, or the data directory's key file, made on first use. */
export async function loadEncryptionKeys(config: Pick<Config, 'encryptionKeys' | 'dataDir'>): Promise<EncryptionKey[]> {
  if (config.encryptionKeys.length > 0) return config.encryptionKeys.map(encryptionKey);
  return [encryptionKey(await readOrCreateKeyFile(join(config.dataDir, KEY_FILE)))];
}

export function secretBoxFor(config: Pick<Config, 'encryptionKeys' | 'dataDir'>): SecretBox {
  return new SecretBox(() => loadEncryptionKeys(config));
}

/**
 * Race-free across processes starting together: each writes its own candidate to a private temp file
 * and hard-links it into place; link() fails when the name exists, and then everyone reads the winner.
 */
async function readOrCreateKeyFile(file: string): Promise<Buffer> {
  try {
    return parseKeyFile(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(join(file, '..'), { recursive: true });
  const candidate = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(candidate, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(candidate, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(candidate, { force: true });
  }
  return parseKeyFile(await readFile(file, 'utf8'), file);
}

function parseKeyFile(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} must hold one base64-encoded 32-byte key`);
  return key;
}
