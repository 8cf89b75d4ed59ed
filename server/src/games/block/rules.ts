// What the block game takes as a player name, an item id and a game mode (DECISIONS.md §6 "Games"): one
// definition for the platform's checks (actions.ts, replies.ts) and the game program's (workloads/block).
export const PLAYER_NAME = /^[A-Za-z0-9_]{3,16}$/;
export const ITEM_ID = /^[a-z0-9_.-]+:[a-z0-9_./-]+$/;
/** In Minecraft's order: a mode's index is its `playerGameType`. */
export const GAME_MODES = ['survival', 'creative', 'adventure', 'spectator'] as const;
export type GameMode = (typeof GAME_MODES)[number];
