// The SSH server of the platform's own (server/src/agent/ssh.ts), which machines without an sshd of their
// own run (LXD's): OpenSSH's client signs in with a key of root's authorized_keys and ssh2 with the
// password while one is set, both read from the machine's files at each attempt.
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentLog } from '../../server/src/agent/log.js';
import { startMachineSsh, type MachineSsh } from '../../server/src/agent/ssh.js';
import { createLocalDriver, type LocalDriver } from '../../server/src/substrate/local/driver.js';
import { localLayout } from '../../server/src/substrate/local/layout.js';
import { NO_CREDENTIALS } from '../../server/src/substrate/machine-credentials.js';
import { passwordAccess } from '../support/machine-access.js';
import { keyPair, keysDir, removeDir, sshByKey, sshByPassword, type KeyPair } from './ssh-login.js';

let dataDir: string;
let keys: string;
let driver: LocalDriver;
let server: MachineSsh;
let port: number;
let ed: KeyPair;
let rsa: KeyPair;
const HOST = '127.0.0.1';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, HOST, r));
  const { port: p } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return p;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'agent-ssh-'));
  keys = await keysDir();
  [ed, rsa] = await Promise.all([keyPair(keys, 'ed'), keyPair(keys, 'rsa', 'rsa', 2048)]);
  driver = createLocalDriver({ dataDir });
  await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
  await driver.installImage('vol-1', 'debian-12');
  await driver.resetMachineAccess('unit-1', 'vol-1', NO_CREDENTIALS);
  port = await freePort();
  const volumeDir = localLayout(dataDir).volumeDir('vol-1');
  server = await startMachineSsh(
    { id: 'unit-1', address: HOST, volumeDir, substrate: 'test' },
    agentLog(),
    port,
  );
});
afterAll(async () => {
  await server?.close();
  await driver?.close({ stopUnits: true });
  await rm(dataDir, { recursive: true, force: true });
  await removeDir(keys);
});

describe("the agent's SSH server", () => {
  it('refuses everyone while the machine has no keys and no password', async () => {
    expect(await sshByKey(HOST, port, ed)).toBe('refused');
    expect(await sshByPassword(HOST, port, 'anything')).toBe('client-authentication');
  });

  it('lets in the keys of authorized_keys (Ed25519 and RSA, by OpenSSH), and the password while set', async () => {
    const access = await passwordAccess([ed.publicLine, rsa.publicLine]);
    await driver.setMachineAccess('unit-1', 'vol-1', access.credentials);
    expect(await sshByKey(HOST, port, ed)).toContain('machine unit-1');
    expect(await sshByKey(HOST, port, rsa)).toContain('machine unit-1');
    expect(await sshByPassword(HOST, port, access.password)).toContain('machine unit-1');
    expect(await sshByPassword(HOST, port, `${access.password}x`)).toBe('client-authentication');

    await driver.setMachineAccess('unit-1', 'vol-1', { authorizedKeys: [rsa.publicLine], password: null });
    expect(await sshByKey(HOST, port, ed)).toBe('refused');
    expect(await sshByKey(HOST, port, rsa)).toContain('machine unit-1');
    expect(await sshByPassword(HOST, port, access.password)).toBe('client-authentication');
  });
});
