// Asking a Quake 3 server what it is running (document 2 §2 "Game live info"): `getstatus`, twice if the
// first goes unanswered (UDP loses packets), then `getinfo` (servers that throttle or drop getstatus).
// Quake 3 servers rate-limit these queries and are used as reflectors (OpenJK#281), so one query per
// server is in flight at a time and its answer is kept for a moment: callers asking meanwhile share it.
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { stripColours } from './colour.js';
import { parseReply, ParseError, request, type ParsedReply } from './protocol.js';

export interface LiveInfo {
  hostname: string;
  gametype: string;
  map: string;
  players_connected: number;
  slots: number;
  players: { id: number; name: string; ping: number }[];
}

export type QueryOutcome = { status: 'ok'; info: LiveInfo } | { status: 'offline' | 'parse_error' | 'error' };

export interface QueryOptions {
  /** How long each attempt waits for its answer. */
  attemptMs?: number;
}

// ioquake3's g_gametype values (bg_public.h gametype_t).
const GAMETYPES = ['ffa', 'tournament', 'single_player', 'team', 'ctf'];

/** One exchange: the answer to `command`, null when none came within `ms`. */
function ask(
  host: string,
  port: number,
  command: 'getstatus' | 'getinfo',
  ms: number,
): Promise<ParsedReply | null> {
  const challenge = randomBytes(8).toString('hex');
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      fn();
    };
    const timer = setTimeout(() => finish(() => resolve(null)), ms);
    socket.on('error', (err: NodeJS.ErrnoException) =>
      // A refused port (ICMP unreachable on the connected socket) is a server that is not there.
      finish(() => (err.code === 'ECONNREFUSED' ? resolve(null) : reject(err))),
    );
    socket.on('message', (packet) => {
      let reply: ParsedReply | null;
      try {
        reply = parseReply(packet);
      } catch (err) {
        finish(() => reject(err));
        return;
      }
      // Not an answer to this question (a stale reply, another kind of packet): keep waiting.
      if (!reply || reply.info.get('challenge') !== challenge) return;
      finish(() => resolve(reply));
    });
    socket.connect(port, host, () => socket.send(request(command, challenge)));
  });
}

function toLiveInfo(reply: ParsedReply): LiveInfo {
  const get = (...keys: string[]) => keys.map((k) => reply.info.get(k)).find((v) => v !== undefined);
  const slots = Number(get('sv_maxclients') ?? NaN);
  const map = get('mapname');
  if (!Number.isInteger(slots) || map === undefined) throw new ParseError('no sv_maxclients or mapname');
  const gametypeValue = get('g_gametype', 'gametype') ?? '';
  const players = (reply.players ?? []).map((p, id) => ({ id, name: p.name, ping: p.ping }));
  const connected = reply.players ? players.length : Number(get('clients') ?? 0);
  return {
    hostname: stripColours(get('sv_hostname', 'hostname') ?? ''),
    gametype: GAMETYPES[Number(gametypeValue)] ?? stripColours(gametypeValue),
    map: stripColours(map),
    players_connected: Number.isInteger(connected) ? connected : 0,
    slots,
    players,
  };
}

/** Queries the server now (no cache). */
export async function queryServer(
  host: string,
  port: number,
  options: QueryOptions = {},
): Promise<QueryOutcome> {
  const ms = options.attemptMs ?? 600;
  try {
    const reply =
      (await ask(host, port, 'getstatus', ms)) ??
      (await ask(host, port, 'getstatus', ms)) ??
      (await ask(host, port, 'getinfo', ms));
    if (!reply) return { status: 'offline' };
    return { status: 'ok', info: toLiveInfo(reply) };
  } catch (err) {
    return { status: err instanceof ParseError ? 'parse_error' : 'error' };
  }
}

/** Answers kept per server for `ttlMs` after they arrive; one query in flight per server. */
export class LiveInfoCache {
  readonly #entries = new Map<string, { at: number | null; answer: Promise<QueryOutcome> }>();

  constructor(
    private readonly ttlMs = 1500,
    private readonly options: QueryOptions = {},
  ) {}

  query(host: string, port: number): Promise<QueryOutcome> {
    const key = `${host}:${port}`;
    const now = performance.now();
    const entry = this.#entries.get(key);
    if (entry && (entry.at === null || now - entry.at < this.ttlMs)) return entry.answer;
    this.#sweep(now);
    const fresh: { at: number | null; answer: Promise<QueryOutcome> } = {
      at: null,
      answer: Promise.resolve({ status: 'error' }),
    };
    fresh.answer = queryServer(host, port, this.options).then((answer) => {
      fresh.at = performance.now();
      return answer;
    });
    this.#entries.set(key, fresh);
    return fresh.answer;
  }

  #sweep(now: number): void {
    for (const [key, e] of this.#entries)
      if (e.at !== null && now - e.at >= this.ttlMs) this.#entries.delete(key);
  }
}
