// What an import allows a remote (DECISIONS.md §8 "Imports against hostile servers"): a server that never
// ends its listing, nests directories without end, or stops answering ends the import `failed`, with the
// limit or the stall named, instead of holding the platform's memory or the service.
export const IMPORT_LIMITS = {
  /** Names a listing may hold, every kind counted (links and skipped names too: each costs a read). */
  maxEntries: 100_000,
  /** Directories below the copied one: `/a` is at 1. */
  maxDepth: 64,
  /** The longest any wait for the remote (connect, sign-in, each listing read, each file read) may be. */
  stallMs: 30_000,
} as const;

export type ImportLimits = { maxEntries: number; maxDepth: number; stallMs: number };

/** Linux's NAME_MAX: a longer name cannot be made in a volume, so it is never kept from a listing. */
export const MAX_NAME_BYTES = 255;
