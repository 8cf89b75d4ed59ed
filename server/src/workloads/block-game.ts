// The block game's server program (the `block-game` product): a Minecraft Java Edition server in
// offline mode (flying-squid, PrismarineJS) that real clients join on the unit's address, its MOTD the
// service's name, with Minecraft's RCON on the unit's address for the platform only (its port is never
// forwarded), answering in vanilla's formats (./block/vanilla.ts). Its console is flying-squid's own.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { stripColourCodes } from '../games/colour-codes.js';
import { GAME_ENV } from '../games/unit-env.js';
import { startRconServer } from './block/rcon-server.js';
import { MINECRAFT_VERSION, RCON_PORT } from './block/version.js';
import { VanillaCommands, type SquidPlayer, type SquidServer } from './block/vanilla.js';
import { listenAddress } from './console-loop.js';

const MAX_PLAYERS = 20;

const require = createRequire(import.meta.url);
const flyingSquid = require('flying-squid') as {
  createMCServer(options: Record<string, unknown>): SquidServer & {
    on(event: 'newPlayer', listener: (player: SquidPlayer) => void): void;
    on(event: 'listening', listener: () => void): void;
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
  // In memory: a fresh flat world at each start keeps start-up quick and the volume small.
  worldFolder: undefined,
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

const password = process.env[GAME_ENV.rconPassword];
if (at && password) startRconServer({ host: at.host, port: RCON_PORT }, password, (c) => vanilla.run(c));
