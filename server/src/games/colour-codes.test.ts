import { describe, expect, it } from 'vitest';
import { stripColourCodes } from './colour-codes.js';

describe('stripColourCodes', () => {
  it.each([
    ['^1Rocket ^7Arena', 'Rocket Arena'],
    ['&eSteve joined the game.', 'Steve joined the game.'],
    ['§aGreen §lbold§r', 'Green bold'],
    ['Tom & Jerry', 'Tom & Jerry'],
    ['R&D', 'R&D'],
    ['plain', 'plain'],
  ])('%j → %j', (given, want) => {
    expect(stripColourCodes(given)).toBe(want);
  });
});
