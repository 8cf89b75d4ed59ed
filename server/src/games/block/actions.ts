// Player actions as vanilla RCON commands, and what the server's reply says of each (document 2 §4
// "Game servers"; DECISIONS.md §6 "Games"). Every field reaching a command was checked by the schema
// (names, item ids, messages without control characters), so a field is one argument, never a second
// command; the checks are repeated here since a command line is where an unchecked newline would bite.
import type { components } from '../../../../generated/api.js';
import { UNKNOWN_COMMAND } from './replies.js';
import { ITEM_ID, PLAYER_NAME } from './rules.js';

export type GameAction = components['schemas']['GameActionRequest'];
type Kind = GameAction['kind'];

// eslint-disable-next-line no-control-regex
const MESSAGE = /^[^\x00-\x1f\x7f-\x9f\u2028\u2029]{1,256}$/;

/** The audit action of each kind's success (DECISIONS.md §6 "Audit"). */
export const AUDIT_ACTION: Record<Kind, string> = {
  kick: 'game.player_kicked',
  ban: 'game.player_banned',
  pardon: 'game.player_pardoned',
  op: 'game.player_opped',
  deop: 'game.player_deopped',
  gamemode: 'game.player_gamemode_set',
  whisper: 'game.player_whispered',
  give: 'game.item_given',
  broadcast: 'game.broadcast_sent',
};

/** The command line of `action`. */
export function commandOf(action: GameAction): string {
  const name = 'name' in action ? checked(action.name, PLAYER_NAME) : '';
  const text = (s: string | undefined) => (s === undefined ? '' : ` ${checked(s, MESSAGE)}`);
  switch (action.kind) {
    case 'kick':
    case 'ban':
      return `${action.kind} ${name}${text(action.reason)}`;
    case 'pardon':
    case 'op':
    case 'deop':
      return `${action.kind} ${name}`;
    case 'gamemode':
      return `gamemode ${action.mode} ${name}`;
    case 'whisper':
      return `tell ${name}${text(action.message)}`;
    case 'give': {
      const count = action.count ?? 1;
      if (!Number.isInteger(count) || count < 1 || count > 64) throw new Error('count out of range');
      return `give ${name} ${checked(action.item, ITEM_ID)} ${count}`;
    }
    case 'broadcast':
      return `say${text(action.message)}`;
  }
}

function checked(value: string, rule: RegExp): string {
  if (!rule.test(value)) throw new Error('an unchecked field reached a command');
  return value;
}

// Vanilla's answers (1.13+): done, already so (the state asked for holds), or refused as given.
const DONE: Record<Kind, RegExp> = {
  kick: /^Kicked /,
  ban: /^Banned /,
  pardon: /^Unbanned /,
  op: /^Made .+ a server operator$/,
  deop: /^Made .+ no longer a server operator$/,
  gamemode: /^Set .+'s game mode to /,
  whisper: /^You whisper to /,
  give: /^Gave \d+ /,
  // `say` answers nothing.
  broadcast: /^$/,
};
const ALREADY = /^Nothing changed\./;
const REFUSED = /^(No player was found|No entity was found|Unknown item|That player does not exist)/;

export type ActionOutcome = 'ok' | 'unsupported_by_server' | 'parse_error';

/** What the reply to `kind`'s command says happened. */
export function outcomeOf(kind: Kind, reply: string): ActionOutcome {
  const text = reply.replace(/§./g, '').trim();
  if (DONE[kind].test(text) || ALREADY.test(text)) return 'ok';
  if (REFUSED.test(text) || UNKNOWN_COMMAND.test(text)) return 'unsupported_by_server';
  return 'parse_error';
}

/** The audit entry's target: the player acted on, or the service for a broadcast; never a message. */
export function auditTarget(action: GameAction, serviceId: string): { type: string; id: string } {
  return action.kind === 'broadcast'
    ? { type: 'service_instance', id: serviceId }
    : { type: 'game_player', id: action.name };
}
