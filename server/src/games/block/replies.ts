// Vanilla Minecraft's (1.13+) RCON replies, read back into the roster's fields (document 2 §2 "Game
// roster"; DECISIONS.md §6 "Games"). A `list` reply that is not vanilla's is read permissively (the
// names after its first colon) and flagged; one with no list at all is a parse error.
import { GAME_MODES, type GameMode } from './rules.js';

export interface OnlineList {
  players: { name: string; uuid: string | null }[];
  maxPlayers: number | null;
  partial: boolean;
}

const LIST = /^There are (\d+) of a max(?: of)? (\d+) players online:(.*)$/s;
const WITH_UUID = /^(\S+) \(([0-9a-fA-F-]{32,36})\)$/;
const NAME = /^[A-Za-z0-9_]{1,16}$/;

/** What a server answers to a command it does not have (vanilla's, and common others'). */
export const UNKNOWN_COMMAND = /^(Unknown or incomplete command|Unknown command|Incorrect argument)/i;

/** The online players of a `list` or `list uuids` reply, or null when it holds no list. */
export function parseList(reply: string): OnlineList | null {
  const text = reply.replace(/§./g, '').trim();
  const vanilla = LIST.exec(text);
  if (vanilla) {
    const entries = splitNames(vanilla[3]!);
    const players = entries.map((e) => {
      const m = WITH_UUID.exec(e);
      return m ? { name: m[1]!, uuid: m[2]!.toLowerCase() } : { name: e, uuid: null };
    });
    const exact = players.every((p) => NAME.test(p.name)) && players.length === Number(vanilla[1]);
    return { players, maxPlayers: Number(vanilla[2]), partial: !exact };
  }
  // Another server's words ("Online (2/20): a, b"): names after the first colon, when they look like names.
  const colon = text.indexOf(':');
  if (colon < 0 || UNKNOWN_COMMAND.test(text)) return null;
  const names = splitNames(text.slice(colon + 1).split('\n')[0]!).map((e) => e.replace(/ \(.*\)$/, ''));
  if (!names.every((n) => NAME.test(n))) return null;
  const max = /(\d+)\s*\/\s*(\d+)/.exec(text.slice(0, colon));
  return {
    players: names.map((name) => ({ name, uuid: null })),
    maxPlayers: max ? Number(max[2]) : null,
    partial: true,
  };
}

function splitNames(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `banlist players`: the bans, or null when the reply is not vanilla's. */
export function parseBanlist(reply: string): { name: string; reason: string | null }[] | null {
  const text = reply.replace(/§./g, '').trim();
  if (/^There are no bans$/.test(text)) return [];
  const lines = text.split('\n');
  const head = /^There (?:are|is) (\d+) bans?(?:\(s\))?:$/.exec(lines[0]!.trim());
  if (!head) return null;
  const bans: { name: string; reason: string | null }[] = [];
  for (const line of lines.slice(1)) {
    const m = /^(\S+) was banned by (.+?):(?: (.*))?$/.exec(line.trim());
    if (!m) return null;
    bans.push({ name: m[1]!, reason: m[3] ? m[3] : null });
  }
  return bans;
}

/** The operators of a vanilla `ops.json`, or null when it is not one. */
export function parseOpsJson(text: string): { name: string }[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const ops: { name: string }[] = [];
  for (const entry of value) {
    const name = (entry as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return null;
    ops.push({ name });
  }
  return ops;
}


const ENTITY_DATA = /^\S+ has the following entity data: (.*)$/s;

/** `data get entity NAME playerGameType`: the mode, or null. */
export function parseGameMode(reply: string): GameMode | null {
  const m = ENTITY_DATA.exec(reply.trim());
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(n) && n >= 0 && n < GAME_MODES.length ? GAME_MODES[n]! : null;
}

/** `data get entity NAME Pos`: the coordinates, or null. */
export function parsePosition(reply: string): { x: number; y: number; z: number } | null {
  const m = ENTITY_DATA.exec(reply.trim());
  const pos = m && /^\[(-?[\d.E+-]+)d, (-?[\d.E+-]+)d, (-?[\d.E+-]+)d\]$/.exec(m[1]!.trim());
  if (!pos) return null;
  const [x, y, z] = [Number(pos[1]), Number(pos[2]), Number(pos[3])];
  return [x, y, z].every(Number.isFinite) ? { x, y, z } : null;
}
