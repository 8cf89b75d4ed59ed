// The block game's roster, gathered over RCON (document 2 §2 "Game roster"; DECISIONS.md §6 "Games"):
// `list uuids` for who is online, `banlist players` for the bans, the volume's ops.json for the
// operators (vanilla has no command that lists them), and one `data get entity` round trip per online
// player for each field `include` asks.
import type { components } from '../../../../generated/api.js';
import { FileLayerError } from '../../substrate/local/files/errors.js';
import type { VolumeFileAccess } from '../../substrate/volume-access.js';
import { RconError, type RconClient } from '../rcon/client.js';
import {
  parseBanlist,
  parseGameMode,
  parseList,
  parseOpsJson,
  parsePosition,
  UNKNOWN_COMMAND,
  type OnlineList,
} from './replies.js';

export type Roster = components['schemas']['GameRoster'];
export type RosterStatus = Roster['status'];
type Player = components['schemas']['GameRosterPlayer'];
export type Include = 'gamemode' | 'position';

/** A roster of nothing, for every status but ok. */
export const emptyRoster = (status: Exclude<RosterStatus, 'ok'>): Roster => ({
  status,
  online: [],
  ops: [],
  banned: [],
  max_players: null,
  ops_unavailable: false,
  banned_unavailable: false,
  partial_list_format: false,
});

export class RosterParseError extends Error {
  override readonly name = 'RosterParseError';
}

/** The roster; an RconError (the server's state) or RosterParseError says why there is none. */
export async function gatherRoster(
  rcon: RconClient,
  files: VolumeFileAccess | null,
  include: readonly Include[],
): Promise<Roster> {
  const list = await onlinePlayers(rcon);
  const banned = parseBanlist(await rcon.command('banlist players'));
  const ops = files ? await readOps(files) : null;
  const online: Player[] = [];
  for (const p of list.players) {
    const player: Player = { name: p.name, uuid: p.uuid };
    // A player who left meanwhile answers "No entity was found": the field stays absent.
    if (include.includes('gamemode')) {
      const mode = parseGameMode(await rcon.command(`data get entity ${p.name} playerGameType`));
      if (mode) player.gamemode = mode;
    }
    if (include.includes('position')) {
      const at = parsePosition(await rcon.command(`data get entity ${p.name} Pos`));
      if (at) player.position = at;
    }
    online.push(player);
  }
  return {
    status: 'ok',
    online,
    ops: ops ?? [],
    banned: banned ?? [],
    max_players: list.maxPlayers,
    ops_unavailable: ops === null,
    banned_unavailable: banned === null,
    partial_list_format: list.partial,
  };
}

async function onlinePlayers(rcon: RconClient): Promise<OnlineList> {
  const withUuids = await rcon.command('list uuids');
  // Servers before 1.13 have no `list uuids`: their plain `list` has no UUIDs.
  const reply = UNKNOWN_COMMAND.test(withUuids.trim()) ? await rcon.command('list') : withUuids;
  const list = parseList(reply);
  if (!list) throw new RosterParseError('the list reply holds no player list');
  // Names only (a `uuids` reply that gave none, or another server's words): no UUID is invented.
  return list;
}

async function readOps(files: VolumeFileAccess): Promise<{ name: string }[] | null> {
  try {
    return parseOpsJson((await files.read('/ops.json')).content);
  } catch (err) {
    // No ops.json yet: nobody was ever made an operator.
    if (err instanceof FileLayerError && err.code === 'not-found') return [];
    return null;
  }
}

/** The roster's status for a failure of the RCON exchange. */
export function rosterFailure(err: unknown): Exclude<RosterStatus, 'ok'> {
  if (err instanceof RconError) return err.status;
  if (err instanceof RosterParseError) return 'parse_error';
  throw err;
}
