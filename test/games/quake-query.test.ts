// The Quake 3 query client against a UDP peer that answers with recorded ioquake3 packets (players
// included: the Debian package cannot run bots, so a real server here never lists any), and that drops,
// forges, stalls and garbles: challenge echo, retry and getinfo fallback, colour codes, the cache that
// keeps one query in flight per server.
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { stripColours } from '../../server/src/games/arena/colour.js';
import { LiveInfoCache, queryServer } from '../../server/src/games/arena/query.js';

const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

/** What ioquake3 1.36 sends for `getstatus` with two players (the challenge filled in per request). */
const STATUS = (challenge: string) =>
  Buffer.concat([
    OOB,
    Buffer.from(
      `statusResponse\n\\challenge\\${challenge}\\sv_hostname\\^1Red ^7Arena^^2!^\\version\\ioq3 1.36\\g_gametype\\4` +
        `\\mapname\\q3dm17\\sv_maxclients\\12\\sv_privateClients\\0\n` +
        `12 48 "^4Sarge^7"\n-3 999 "Doom ^^1x"\n`,
      'latin1',
    ),
  ]);
const INFO = (challenge: string) =>
  Buffer.concat([
    OOB,
    Buffer.from(
      `infoResponse\n\\challenge\\${challenge}\\hostname\\^3Info\\mapname\\tiny\\clients\\3\\sv_maxclients\\8\\gametype\\0`,
      'latin1',
    ),
  ]);

interface Peer {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

type Answer = (command: string, challenge: string, reply: (packet: Buffer) => void) => void;

async function peer(answer: Answer): Promise<Peer> {
  const socket: Socket = createSocket('udp4');
  const requests: string[] = [];
  socket.on('message', (packet, from) => {
    const text = packet.subarray(4).toString('latin1').trim();
    requests.push(text);
    const [command, challenge] = text.split(' ');
    answer(command!, challenge ?? '', (p) => socket.send(p, from.port, from.address));
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    port: socket.address().port,
    requests,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

let open: Peer | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

describe('colour codes, as ioquake3 strips them', () => {
  it.each([
    ['^1Red^7Server', 'RedServer'],
    ['^^1a', '^a'],
    ['trailing^', 'trailing^'],
    ['^^^^', '^^^^'],
    ['^xname', 'name'],
    ['tab\there', 'tabhere'],
  ])('%j reads %j', (input, output) => expect(stripColours(input)).toBe(output));
});

describe('queryServer', () => {
  it('parses a statusResponse with players, never their addresses', async () => {
    open = await peer((cmd, ch, reply) => cmd === 'getstatus' && reply(STATUS(ch)));
    expect(await queryServer('127.0.0.1', open.port)).toEqual({
      status: 'ok',
      info: {
        hostname: 'Red Arena^!^',
        gametype: 'ctf',
        map: 'q3dm17',
        players_connected: 2,
        slots: 12,
        players: [
          { id: 0, name: 'Sarge', ping: 48 },
          { id: 1, name: 'Doom ^x', ping: 999 },
        ],
      },
    });
  });

  it('ignores an answer with another challenge, asks again, then falls back to getinfo', async () => {
    open = await peer((cmd, ch, reply) => {
      if (cmd === 'getstatus') reply(STATUS(`${ch}-forged`));
      else reply(INFO(ch));
    });
    const answer = await queryServer('127.0.0.1', open.port, { attemptMs: 150 });
    expect(open.requests.map((r) => r.split(' ')[0])).toEqual(['getstatus', 'getstatus', 'getinfo']);
    expect(answer).toEqual({
      status: 'ok',
      info: { hostname: 'Info', gametype: 'ffa', map: 'tiny', players_connected: 3, slots: 8, players: [] },
    });
  });

  it('answers after a first packet is lost', async () => {
    let seen = 0;
    open = await peer((cmd, ch, reply) => {
      if (cmd === 'getstatus' && ++seen === 2) reply(STATUS(ch));
    });
    expect((await queryServer('127.0.0.1', open.port, { attemptMs: 150 })).status).toBe('ok');
    expect(open.requests).toHaveLength(2);
  });

  it('is offline when nothing answers, and when the port is closed', async () => {
    open = await peer(() => undefined);
    expect(await queryServer('127.0.0.1', open.port, { attemptMs: 100 })).toEqual({ status: 'offline' });
    expect(open.requests).toHaveLength(3);
    const port = open.port;
    await open.close();
    open = null;
    expect(await queryServer('127.0.0.1', port, { attemptMs: 100 })).toEqual({ status: 'offline' });
  });

  it.each([
    ['a status line without an info string', (ch: string) => `statusResponse\nchallenge\\${ch}\n`],
    [
      'a player line out of format',
      (ch: string) => `statusResponse\n\\challenge\\${ch}\\sv_maxclients\\8\\mapname\\m\nbogus\n`,
    ],
    ['an odd info string', (ch: string) => `statusResponse\n\\challenge\\${ch}\\sv_maxclients\n`],
  ])('is parse_error for %s', async (_what, body) => {
    open = await peer((_cmd, ch, reply) => reply(Buffer.concat([OOB, Buffer.from(body(ch), 'latin1')])));
    expect(await queryServer('127.0.0.1', open.port, { attemptMs: 150 })).toEqual({ status: 'parse_error' });
  });

  it('is parse_error for an answer lacking the map or the slots', async () => {
    open = await peer((_cmd, ch, reply) =>
      reply(
        Buffer.concat([OOB, Buffer.from(`statusResponse\n\\challenge\\${ch}\\sv_hostname\\x\n`, 'latin1')]),
      ),
    );
    expect(await queryServer('127.0.0.1', open.port, { attemptMs: 150 })).toEqual({ status: 'parse_error' });
  });

  it('ignores packets that are not answers (another kind, no OOB header)', async () => {
    open = await peer((cmd, ch, reply) => {
      reply(Buffer.from('garbage'));
      reply(Buffer.concat([OOB, Buffer.from('print\nhello\n')]));
      if (cmd === 'getstatus') reply(STATUS(ch));
    });
    expect((await queryServer('127.0.0.1', open.port, { attemptMs: 300 })).status).toBe('ok');
  });
});

describe('LiveInfoCache', () => {
  it('sends one query for callers asking together, and asks again once the answer is stale', async () => {
    open = await peer((cmd, ch, reply) => cmd === 'getstatus' && setTimeout(() => reply(STATUS(ch)), 50));
    const cache = new LiveInfoCache(200, { attemptMs: 300 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => cache.query('127.0.0.1', open!.port)));
    expect(new Set(answers).size).toBe(1);
    expect(open.requests).toHaveLength(1);
    await cache.query('127.0.0.1', open.port);
    expect(open.requests).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await cache.query('127.0.0.1', open.port);
    expect(open.requests).toHaveLength(2);
  });
});
