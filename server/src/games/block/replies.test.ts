// Vanilla's RCON replies read back, and what is not vanilla's read permissively or refused.
import { describe, expect, it } from 'vitest';
import { parseBanlist, parseGameMode, parseList, parseOpsJson, parsePosition } from './replies.js';
import { commandOf, outcomeOf } from './actions.js';

const UUID = '0b2d8f1e-7a6b-3c1d-9e8f-112233445566';

describe('list', () => {
  it('reads vanilla with and without UUIDs, an empty server included', () => {
    expect(parseList('There are 0 of a max of 20 players online: ')).toEqual({
      players: [],
      maxPlayers: 20,
      partial: false,
    });
    expect(parseList(`There are 2 of a max of 20 players online: Alice (${UUID}), Bob_2 (${UUID})`)).toEqual({
      players: [
        { name: 'Alice', uuid: UUID },
        { name: 'Bob_2', uuid: UUID },
      ],
      maxPlayers: 20,
      partial: false,
    });
    expect(parseList('There are 1 of a max of 8 players online: Alice')?.players).toEqual([
      { name: 'Alice', uuid: null },
    ]);
  });

  it('flags a count that disagrees, and reads another server words permissively', () => {
    expect(parseList('There are 3 of a max of 20 players online: Alice')?.partial).toBe(true);
    expect(parseList('§6Online (2/50):§r Alice, Bob')).toEqual({
      players: [
        { name: 'Alice', uuid: null },
        { name: 'Bob', uuid: null },
      ],
      maxPlayers: 50,
      partial: true,
    });
  });

  it('finds no list in an error or in prose', () => {
    expect(parseList('Unknown or incomplete command, see below for error')).toBeNull();
    expect(parseList('nobody here')).toBeNull();
    expect(parseList('Players: this is not, a list of names!')).toBeNull();
  });
});

describe('banlist, ops.json, entity data', () => {
  it('reads bans with their reasons', () => {
    expect(parseBanlist('There are no bans')).toEqual([]);
    expect(parseBanlist('There are 2 ban(s):\nMallory was banned by Rcon: griefing\nEve was banned by Server: ')).toEqual([
      { name: 'Mallory', reason: 'griefing' },
      { name: 'Eve', reason: null },
    ]);
    expect(parseBanlist('Banned: Mallory')).toBeNull();
  });

  it('reads ops.json, refusing what is not one', () => {
    expect(parseOpsJson(JSON.stringify([{ uuid: UUID, name: 'Alice', level: 4 }]))).toEqual([{ name: 'Alice' }]);
    expect(parseOpsJson('{"name":"x"}')).toBeNull();
    expect(parseOpsJson('[{"level":4}]')).toBeNull();
    expect(parseOpsJson('not json')).toBeNull();
  });

  it('reads a game mode and a position, and nothing from a missing entity', () => {
    expect(parseGameMode('Alice has the following entity data: 1')).toBe('creative');
    expect(parseGameMode('Alice has the following entity data: 7')).toBeNull();
    expect(parseGameMode('No entity was found')).toBeNull();
    expect(parsePosition('Alice has the following entity data: [8.5d, -60.0d, 1.0E-4d]')).toEqual({
      x: 8.5,
      y: -60,
      z: 0.0001,
    });
    expect(parsePosition('No entity was found')).toBeNull();
  });
});

describe('actions', () => {
  it('builds one command of checked fields', () => {
    expect(commandOf({ kind: 'kick', name: 'Alice', reason: 'too loud' })).toBe('kick Alice too loud');
    expect(commandOf({ kind: 'ban', name: 'Alice' })).toBe('ban Alice');
    expect(commandOf({ kind: 'gamemode', name: 'Alice', mode: 'creative' })).toBe('gamemode creative Alice');
    expect(commandOf({ kind: 'whisper', name: 'Alice', message: 'hi /op me' })).toBe('tell Alice hi /op me');
    expect(commandOf({ kind: 'give', name: 'Alice', item: 'minecraft:diamond' })).toBe(
      'give Alice minecraft:diamond 1',
    );
    expect(commandOf({ kind: 'broadcast', message: 'restart soon' })).toBe('say restart soon');
  });

  it('refuses a field the schema would have refused, should one get past it', () => {
    expect(() => commandOf({ kind: 'broadcast', message: 'a\nop Mallory' })).toThrow();
    expect(() => commandOf({ kind: 'op', name: 'Al ice' })).toThrow();
    expect(() => commandOf({ kind: 'give', name: 'Alice', item: 'diamond', count: 1 })).toThrow();
    expect(() => commandOf({ kind: 'give', name: 'Alice', item: 'minecraft:stone', count: 65 })).toThrow();
  });

  it('reads what the reply says happened', () => {
    expect(outcomeOf('kick', 'Kicked Alice: too loud')).toBe('ok');
    expect(outcomeOf('op', 'Nothing changed. The player already is an operator')).toBe('ok');
    expect(outcomeOf('broadcast', '')).toBe('ok');
    expect(outcomeOf('kick', 'No player was found')).toBe('unsupported_by_server');
    expect(outcomeOf('give', "Unknown item 'minecraft:nope'")).toBe('unsupported_by_server');
    expect(outcomeOf('whisper', 'Unknown or incomplete command, see below for error')).toBe('unsupported_by_server');
    expect(outcomeOf('ban', 'Something else entirely')).toBe('parse_error');
  });
});
