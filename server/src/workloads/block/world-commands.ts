// The world's commands on RCON and the console, in vanilla's (1.21) reply formats: `save-all [flush]`,
// `save-off`, `save-on` (what the platform sends around a backup's archive, as vanilla's backup advice
// says) and `setblock X Y Z BLOCK`, which flying-squid has but answers in its own words and does not
// await.
import type { WorldSaver } from './world-save.js';

/** What this file uses of flying-squid's server. */
export interface SquidWorldServer {
  overworld?: {
    getColumnAt(pos: { x: number; z: number }): Promise<unknown>;
    getBlockStateId(pos: { x: number; y: number; z: number }): Promise<number>;
  };
  registry: { blocksByName: Record<string, { minStateId?: number; defaultState?: number } | undefined> };
  commands: { use(command: string, ctx?: unknown, op?: boolean): Promise<unknown> };
}

const COORD = /^-?\d{1,8}$/;
// Minecraft 1.18+'s overworld: y from -64 to 319.
const MIN_Y = -64;
const MAX_Y = 319;

export class WorldCommands {
  constructor(
    private readonly serv: SquidWorldServer,
    private readonly saver: WorldSaver,
  ) {}

  /** The reply to `line`, or null when it is not one of these commands. */
  async run(line: string): Promise<string | null> {
    const words = line.trim().replace(/^\//, '').split(/\s+/);
    switch (words[0]) {
      case 'save-all':
        try {
          await this.saver.save();
        } catch {
          return 'Unable to save the game (is there enough disk space?)';
        }
        return 'Saving the game (this may take a moment!)\nSaved the game';
      case 'save-off':
        if (!this.saver.periodic) return 'Saving is already turned off';
        this.saver.periodic = false;
        return 'Automatic saving is now disabled';
      case 'save-on':
        if (this.saver.periodic) return 'Saving is already turned on';
        this.saver.periodic = true;
        return 'Automatic saving is now enabled';
      case 'setblock':
        return this.#setBlock(words.slice(1));
      default:
        return null;
    }
  }

  async #setBlock([x, y, z, block, ...rest]: string[]): Promise<string> {
    const world = this.serv.overworld;
    if (!world || !x || !y || !z || !block || rest.length > 0 || ![x, y, z].every((c) => COORD.test(c)))
      return 'Unknown or incomplete command, see below for error';
    const name = block.replace(/^minecraft:/, '');
    const known = this.serv.registry.blocksByName[name];
    if (!known) return `Unknown block type '${block}'`;
    const pos = { x: Number(x), y: Number(y), z: Number(z) };
    if (pos.y < MIN_Y || pos.y > MAX_Y) return 'Cannot place block outside of the world';
    // Loaded first: flying-squid's command does not await its write, and two loads of one missing
    // column race (the later one replaces the changed one).
    await world.getColumnAt(pos);
    await this.serv.commands.use(`setblock ${x} ${y} ${z} ${name}`, {}, true);
    // The column is loaded, so its write lands within a turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    const want = known.minStateId ?? known.defaultState;
    if ((await world.getBlockStateId(pos)) !== want) return 'Could not set the block';
    return `Changed the block at ${x}, ${y}, ${z}`;
  }
}
