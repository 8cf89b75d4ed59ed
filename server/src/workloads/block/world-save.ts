// Saving the block game's world to its volume (DECISIONS.md §8 "The block game's world"): every 5 minutes,
// at every stop, and on `save-all` (the platform's flush before a backup), with `save-off` holding the
// periodic save so an archive never reads a region file mid-write. prismarine-world's own timer saves
// every second and clears its queue after awaiting the writes, losing chunks changed meanwhile: it is
// stopped, and the queue is taken before writing.

/** What this file uses of a prismarine-world World with an anvil provider. */
export interface SavingWorld {
  savingQueue: Map<string, { chunkX: number; chunkZ: number }>;
  unloadQueue: Map<string, { chunkX: number; chunkZ: number }>;
  columns: Record<string, unknown>;
  storageProvider: {
    save(chunkX: number, chunkZ: number, column: unknown): Promise<void>;
    close(): Promise<unknown>;
  } | null;
  stopSaving(): void;
  forceUnloadColumn(key: string, chunkX: number, chunkZ: number): void;
}

export interface PlayerSaver {
  save(): Promise<void>;
}

export const AUTOSAVE_MS = 5 * 60_000;

export class WorldSaver {
  #world: SavingWorld | null = null;
  #timer: NodeJS.Timeout | null = null;
  // One save at a time: a flush asked during the periodic save waits for it, then writes what is left.
  #turn: Promise<unknown> = Promise.resolve();
  /** False after `save-off`: only an explicit save (or the stop) writes. */
  periodic = true;

  constructor(private readonly players: () => PlayerSaver[]) {}

  attach(world: SavingWorld, intervalMs = AUTOSAVE_MS): void {
    world.stopSaving();
    this.#world = world;
    this.#timer = setInterval(() => {
      if (this.periodic) void this.save().catch(() => undefined);
    }, intervalMs);
    this.#timer.unref();
  }

  /** Writes every changed chunk and every player's data; answers how many chunks were written. */
  save(): Promise<number> {
    const run = this.#turn.then(() => this.#write());
    this.#turn = run.catch(() => undefined);
    return run;
  }

  /** The last save, then the region files closed: nothing writes after this. */
  async close(): Promise<number> {
    if (this.#timer) clearInterval(this.#timer);
    const written = await this.save();
    await this.#world?.storageProvider?.close();
    return written;
  }

  async #write(): Promise<number> {
    await Promise.all(this.players().map((p) => p.save().catch(() => undefined)));
    const world = this.#world;
    if (!world?.storageProvider) return 0;
    const batch = [...world.savingQueue.entries()];
    for (const [key] of batch) world.savingQueue.delete(key);
    try {
      await Promise.all(
        batch.map(([key, { chunkX, chunkZ }]) =>
          world.columns[key] ? world.storageProvider!.save(chunkX, chunkZ, world.columns[key]) : undefined,
        ),
      );
    } catch (err) {
      // Kept for the next save rather than lost.
      for (const [key, at] of batch) if (!world.savingQueue.has(key)) world.savingQueue.set(key, at);
      throw err;
    }
    for (const [key, { chunkX, chunkZ }] of world.unloadQueue) {
      if (!world.savingQueue.has(key)) world.forceUnloadColumn(key, chunkX, chunkZ);
    }
    return batch.length;
  }
}
