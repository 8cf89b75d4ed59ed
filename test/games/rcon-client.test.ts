// The platform's RCON client against a vanilla-behaving peer: replies reassembled across 4096-byte
// packets and arbitrary TCP splits, one connection reused by queued commands, batches sent together, and
// each failure status:
// auth_failed, unreachable, timeout (a stall), protocol_error (a malformed packet), then a reconnect.
import { createServer } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { BATCH, RconClient, RconError } from '../../server/src/games/rcon/client.js';
import { encode } from '../../server/src/games/rcon/packet.js';
import { startRconPeer, type PeerBehaviour, type RconPeer } from './rcon-peer.js';

let peer: RconPeer | null = null;
let client: RconClient | null = null;
afterEach(async () => {
  client?.close();
  await peer?.close();
  peer = client = null;
});

const echo: PeerBehaviour = { password: 'pw', reply: (c) => `ran ${c}` };

async function connect(
  behaviour: PeerBehaviour,
  options: Partial<ConstructorParameters<typeof RconClient>[0]> = {},
) {
  peer = await startRconPeer(behaviour);
  client = new RconClient({ host: '127.0.0.1', port: peer.port, password: 'pw', ...options });
  return client;
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RconError) return err.status;
    throw err;
  }
  throw new Error('did not fail');
}

describe('replies', () => {
  it('reassembles a reply of several 4096-byte packets, whole', async () => {
    const long = Array.from({ length: 2500 }, (_, i) => `line ${i}`).join('\n');
    const c = await connect({ password: 'pw', reply: () => long });
    expect(long.length).toBeGreaterThan(3 * 4096);
    expect(await c.command('big')).toBe(long);
    // An exact multiple of 4096 is where an end marker is needed most.
    client!.close();
    await peer!.close();
    const exact = 'x'.repeat(8192);
    const c2 = await connect({ password: 'pw', reply: () => exact });
    expect(await c2.command('exact')).toBe(exact);
  });

  it('frames a stream split byte by byte', async () => {
    const c = await connect({ ...echo, trickle: true });
    expect(await c.command('list')).toBe('ran list');
    expect(await c.command('')).toBe('ran ');
  });

  it('reuses one connection and keeps queued commands in order', async () => {
    const c = await connect(echo);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => c.command(`c${i}`)));
    expect(answers).toEqual(Array.from({ length: 30 }, (_, i) => `ran c${i}`));
    expect(peer!.connections).toBe(1);
    expect(peer!.commands).toEqual(Array.from({ length: 30 }, (_, i) => `c${i}`));
  });

  it('sends a batch together and answers each reply in order, a long one whole, in one turn', async () => {
    const long = 'y'.repeat(9000);
    const c = await connect({ password: 'pw', reply: (cmd) => (cmd === 'c3' ? long : `ran ${cmd}`) });
    const names = Array.from({ length: BATCH + 4 }, (_, i) => `c${i}`);
    const [batch, after] = await Promise.all([c.commands(names), c.command('after')]);
    expect(batch).toEqual(names.map((n) => (n === 'c3' ? long : `ran ${n}`)));
    expect(after).toBe('ran after');
    expect(peer!.commands).toEqual([...names, 'after']);
    expect(peer!.connections).toBe(1);
    // One round trip for many commands: before batching, every read held one command.
    expect(Math.max(...peer!.arrivals)).toBeGreaterThan(1);
    expect(Math.max(...peer!.arrivals)).toBeLessThanOrEqual(BATCH);
    expect(await c.commands([])).toEqual([]);
  });

  it('connects again after the server dropped the connection', async () => {
    const c = await connect(echo);
    expect(await c.command('a')).toBe('ran a');
    peer!.dropAll();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await c.command('b')).toBe('ran b');
    expect(peer!.connections).toBe(2);
  });
});

describe('failures', () => {
  it('auth_failed for a wrong password, sending no command', async () => {
    const c = await connect(echo, { password: 'nope' });
    expect(await failure(c.command('op x'))).toBe('auth_failed');
    expect(peer!.commands).toEqual([]);
  });

  it('unreachable for a refused connection', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    client = new RconClient({ host: '127.0.0.1', port, password: 'pw' });
    expect(await failure(client.command('list'))).toBe('unreachable');
  });

  it('timeout for a stall, then a fresh connection for the next command', async () => {
    let stall = true;
    const c = await connect(
      { password: 'pw', reply: (cmd) => (stall ? null : `ran ${cmd}`) },
      { commandTimeoutMs: 200 },
    );
    expect(await failure(c.command('list'))).toBe('timeout');
    stall = false;
    expect(await c.command('list')).toBe('ran list');
    expect(peer!.connections).toBe(2);
  });

  it('timeout when the server accepts but never answers the auth', async () => {
    const silent = createServer((s) => s.on('error', () => undefined)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    client = new RconClient({
      host: '127.0.0.1',
      port: (silent.address() as { port: number }).port,
      password: 'pw',
      commandTimeoutMs: 150,
    });
    expect(await failure(client.command('list'))).toBe('timeout');
    client.close();
    silent.close();
  });

  it.each([
    ['a negative length', () => Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])],
    ['a length past any packet', () => Buffer.from([0, 0, 0x10, 0])],
    [
      'no NUL ending',
      () => {
        const b = encode({ id: 1, type: 0, body: 'abc' });
        b[b.length - 1] = 0x41;
        return b;
      },
    ],
    ['a reply for an id never asked', () => encode({ id: 999_999, type: 0, body: 'x' })],
  ])('protocol_error for %s, and the next command works', async (_what, bytes) => {
    let garble = true;
    const c = await connect({ ...echo, garble: () => (garble ? bytes() : null) }, { commandTimeoutMs: 1000 });
    expect(await failure(c.command('list'))).toBe('protocol_error');
    garble = false;
    expect(await c.command('list')).toBe('ran list');
  });
});
