// Quake 3's connectionless packets (ioquake3 server/sv_main.c SVC_Status, SVC_Info): four 0xff bytes,
// then a command. `getstatus CHALLENGE` answers `statusResponse\n\key\value...\n` and one line per player
// (`score ping "name"`); `getinfo CHALLENGE` answers `infoResponse\n\key\value...`. Both echo the
// challenge, which is how an answer is told from a stale or forged one.
import { stripColours } from './colour.js';

const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export function request(command: 'getstatus' | 'getinfo', challenge: string): Buffer {
  return Buffer.concat([OOB, Buffer.from(`${command} ${challenge}\n`, 'latin1')]);
}

export class ParseError extends Error {
  override readonly name = 'ParseError';
}

export interface ParsedReply {
  kind: 'statusResponse' | 'infoResponse';
  info: Map<string, string>;
  /** Player lines (statusResponse only). */
  players: { score: number; ping: number; name: string }[] | null;
}

/** The packet's kind and content, or null when it is not an answer of this kind at all (ignored). */
export function parseReply(packet: Buffer): ParsedReply | null {
  if (packet.length < 4 || !packet.subarray(0, 4).equals(OOB)) return null;
  const text = packet.subarray(4).toString('latin1');
  const newline = text.indexOf('\n');
  const head = newline < 0 ? text : text.slice(0, newline);
  if (head !== 'statusResponse' && head !== 'infoResponse') return null;
  if (newline < 0) throw new ParseError(`${head} without content`);
  const lines = text.slice(newline + 1).split('\n');
  if (lines.at(-1) === '') lines.pop();
  const info = parseInfo(lines.shift() ?? '');
  if (head === 'infoResponse') {
    if (lines.length > 0) throw new ParseError('infoResponse with extra lines');
    return { kind: head, info, players: null };
  }
  return { kind: head, info, players: lines.map(parsePlayer) };
}

function parseInfo(line: string): Map<string, string> {
  if (!line.startsWith('\\')) throw new ParseError('info string does not start with a backslash');
  const parts = line.slice(1).split('\\');
  if (parts.length % 2 !== 0) throw new ParseError('info string has a key without a value');
  const info = new Map<string, string>();
  for (let i = 0; i < parts.length; i += 2) info.set(parts[i]!, parts[i + 1]!);
  return info;
}

const PLAYER = /^(-?\d+) (\d+) "(.*)"$/;

function parsePlayer(line: string): { score: number; ping: number; name: string } {
  const m = PLAYER.exec(line);
  if (!m) throw new ParseError('a player line is not `score ping "name"`');
  return { score: Number(m[1]), ping: Number(m[2]), name: stripColours(m[3]!) };
}
