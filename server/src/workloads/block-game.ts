// The block game's server program (the `block-game` product): a Minecraft Java Edition server in
// offline mode (flying-squid, PrismarineJS) that real clients join on the unit's address, its MOTD the
// service's name, with Minecraft's RCON on the unit's address for the platform only (its port is never
// forwarded), answering in vanilla's formats (./block/vanilla.ts). Its console is flying-squid's own.
// The world lives on the volume in world/ (DECISIONS.md §8), saved as ./block/world-save.ts says.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { stripColourCodes } from '../games/colour-codes.js';
import { GAME_ENV } from '../games/unit-env.js';
import { startRconServer } from './block/rcon-server.js';
import { MINECRAFT_VERSION, RCON_PORT } from './block/version.js';
import { VanillaCommands, type SquidPlayer, type SquidServer } from './block/vanilla.js';
import { WorldCommands, type SquidWorldServer } from './block/world-commands.js';
import { WorldSaver, type PlayerSaver, type SavingWorld } from './block/world-save.js';
import { listenAddress } from './console-loop.js';

const MAX_PLAYERS = 20;

const require = createRequire(import.meta.url);
const flyingSquid = require('flying-squid') as {
  createMCServer(options: Record<string, unknown>): SquidServer &
    SquidWorldServer & {
      overworld?: SavingWorld & SquidWorldServer['overworld'];
      commands: { add(command: Record<string, unknown>): void };
      info(message: string): void;
      on(event: 'newPlayer', listener: (player: SquidPlayer) => void): void;
      once(event: 'pluginsReady', listener: () => void): void;
    };
};

const at = listenAddress('tcp', 25565);
const home = process.env.HOME ?? process.cwd();
// flying-squid writes its log to logs/<time>.log under the working directory (the volume), as vanilla
// keeps logs/ there, and fails to open it when the folder is missing.
mkdirSync('logs', { recursive: true });
const serv = flyingSquid.createMCServer({
  host: at?.host ?? '127.0.0.1',
  port: at?.port ?? 25565,
  'online-mode': false,
  motd: (process.env[GAME_ENV.name] ?? 'Block game').slice(0, 59),
  'max-players': MAX_PLAYERS,
  logging: true,
  gameMode: 0,
  difficulty: 1,
  // Relative: the program's working directory is its volume (and will be its sandbox's `/`).
  worldFolder: 'world',
  generation: { name: 'superflat', options: { worldHeight: 80 } },
  kickTimeout: 10000,
  plugins: {},
  modpe: false,
  'view-distance': 4,
  'player-list-text': { header: { text: '' }, footer: { text: '' } },
  'everybody-op': false,
  'max-entities': 100,
  version: MINECRAFT_VERSION,
});
const vanilla = new VanillaCommands(serv, home, MAX_PLAYERS);
serv.on('newPlayer', (player) => {
  // flying-squid writes its own lines with `&` codes (`&eSteve joined the game.`) that a 1.21 client,
  // sent plain text, shows raw: every line a player is sent goes without them (DECISIONS.md §8).
  const system = player.system.bind(player);
  player.system = (message) => system(typeof message === 'string' ? stripColourCodes(message) : message);
  vanilla.joined(player);
});
// Only players past their login have a UUID, the name of their playerdata file.
const saver = new WorldSaver(() => serv.players.filter((p) => p.uuid) as unknown as PlayerSaver[]);
const world = new WorldCommands(serv, saver);
serv.once('pluginsReady', () => {
  if (serv.overworld) saver.attach(serv.overworld);
});
const run = async (line: string) => (await world.run(line)) ?? vanilla.run(line);

const password = process.env[GAME_ENV.rconPassword];
if (at && password) startRconServer({ host: at.host, port: RCON_PORT }, password, run);

for (const base of ['save-all', 'save-off', 'save-on']) {
  serv.commands.add({
    base,
    info: `${base} as vanilla's`,
    usage: `/${base}`,
    op: true,
    action: (args: string) => run(`${base} ${args}`),
  });
}

let stopping: Promise<never> | null = null;
/** Every stop saves the world first: the console's `stop`, and the agent's SIGTERM. */
function stop(): Promise<never> {
  stopping ??= (async () => {
    serv.info('Stopping the server');
    const started = Date.now();
    try {
      const chunks = await saver.close();
      serv.info(`Saved the world (${chunks} chunks) in ${Date.now() - started} ms`);
    } catch (err) {
      serv.info(`Could not save the world: ${(err as Error).message}`);
    }
    // flying-squid appends its log file asynchronously: the last lines get a moment to land.
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.exit(0);
  })();
  return stopping;
}
serv.commands.add({ base: 'stop', info: 'Stop the server', usage: '/stop', op: true, action: () => stop() });
// flying-squid's exit-hook exits at once on SIGTERM and SIGINT, its quit unawaited and nothing saved:
// its listeners (added when its import settles) are taken off again, so the saving stop is the only one.
const onSignal = () => void stop();
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal);
process.on('newListener', (event, listener) => {
  if ((event === 'SIGTERM' || event === 'SIGINT') && listener !== onSignal)
    queueMicrotask(() => process.removeListener(event, listener as () => void));
});
