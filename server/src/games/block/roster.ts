// The block game's roster, gathered over RCON (document 2 §2 "Game roster"; DECISIONS.md §6 "Games"):
// `list uuids` for who is online, `banlist players` for the bans, the volume's ops.json for the
// operators (vanilla has no command that lists them), and one `data get entity` per online player for
// each field `include` asks. The commands go in batches (RconClient.commands): the list and the bans
// together, then every player's questions, so 20 players cost a few round trips rather than 42.
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
  const opsRead = files ? readOps(files) : Promise.resolve(null);
  // Settled before anything can throw, so a failed read is never left unhandled.
  opsRead.catch(() => undefined);
  const [withUuids, bans] = await rcon.commands(['list uuids', 'banlist players']);
  const list = await onlinePlayers(rcon, withUuids!);
  const banned = parseBanlist(bans!);
  const gamemode = include.includes('gamemode');
  const position = include.includes('position');
  const asks = list.players.flatMap((p) => [
    ...(gamemode ? [`data get entity ${p.name} playerGameType`] : []),
    ...(position ? [`data get entity ${p.name} Pos`] : []),
  ]);
  const replies = await rcon.commands(asks);
  const online: Player[] = [];
  let next = 0;
  for (const p of list.players) {
    const player: Player = { name: p.name, uuid: p.uuid };
    // A player who left meanwhile answers "No entity was found": the field stays absent.
    if (gamemode) {
      const mode = parseGameMode(replies[next++]!);
      if (mode) player.gamemode = mode;
    }
    if (position) {
      const at = parsePosition(replies[next++]!);
      if (at) player.position = at;
    }
    online.push(player);
  }
  const ops = await opsRead;
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

async function onlinePlayers(rcon: RconClient, withUuids: string): Promise<OnlineList> {
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
