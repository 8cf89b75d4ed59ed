// The server commands the platform's RCON client sends, answered in vanilla Minecraft's (1.21) reply
// formats, over flying-squid's own player objects: flying-squid has no `list`, bans through Mojang's
// API (unreachable offline) and replies in its own words, so these are ours. Ops and bans persist in
// the volume as vanilla's ops.json and banned-players.json.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GAME_MODES, ITEM_ID, PLAYER_NAME, type GameMode } from '../../games/block/rules.js';

/** What this file uses of a flying-squid player. */
export interface SquidPlayer {
  username: string;
  _client?: { username?: string };
  once(event: 'spawned', listener: () => void): void;
  uuid: string;
  gameMode: number;
  op: boolean;
  position: { x: number; y: number; z: number };
  kick(reason?: string): void;
  chat(message: string): void;
  /** What `chat` sends through on 1.19+ (signed chat): every line a player is sent. */
  system(message: unknown): void;
  setGameMode(mode: number): void;
}

/** What this file uses of a flying-squid server. */
export interface SquidServer {
  players: SquidPlayer[];
  bannedPlayers: Record<string, { time: number; reason: string }>;
  broadcast(message: string): void;
  commands: { use(command: string, ctx?: unknown, op?: boolean): Promise<unknown> };
}

const MODE_TITLES = ['Survival Mode', 'Creative Mode', 'Adventure Mode', 'Spectator Mode'];

/** The UUID an offline-mode server gives a name (Java's UUID.nameUUIDFromBytes of "OfflinePlayer:name"). */
export function offlineUuid(name: string): string {
  const hash = createHash('md5').update(`OfflinePlayer:${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface Ban {
  uuid: string;
  name: string;
  source: string;
  reason: string;
}

function readJson<T>(file: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return fallback;
  }
}

const fmt = (n: number) => `${Number.isInteger(n) ? n.toFixed(1) : String(n)}d`;

export class VanillaCommands {
  readonly #ops: { uuid: string; name: string; level: number }[];
  readonly #bans: Ban[];

  constructor(
    private readonly serv: SquidServer,
    private readonly dir: string,
    private readonly maxPlayers: number,
  ) {
    this.#ops = readJson(join(dir, 'ops.json'), []);
    this.#bans = readJson(join(dir, 'banned-players.json'), []);
    for (const ban of this.#bans) serv.bannedPlayers[ban.uuid] = { time: Date.now(), reason: ban.reason };
  }

  /**
   * A joining player gets the operator status ops.json gives them; a banned name is sent away with its
   * reason. flying-squid's own check reads the player's UUID before it is set (so it never matches):
   * the name decides, as it does for an offline-mode server's UUID.
   */
  joined(player: SquidPlayer): void {
    // Before its login flying-squid has set neither the player's name nor its UUID: the protocol's has it.
    const name = (player.username ?? player._client?.username ?? '').toLowerCase();
    const ban = this.#bans.find((b) => b.name.toLowerCase() === name);
    if (ban) {
      player.kick(ban.reason);
      return;
    }
    // Login sets `op` from its own settings: ops.json decides once the player is in.
    player.once('spawned', () => {
      player.op = this.#ops.some((o) => o.name.toLowerCase() === name);
    });
  }

  #player(name: string): SquidPlayer | undefined {
    return this.serv.players.find((p) => p.username.toLowerCase() === name.toLowerCase());
  }

  #save(): void {
    writeFileSync(join(this.dir, 'ops.json'), JSON.stringify(this.#ops, null, 2));
    writeFileSync(join(this.dir, 'banned-players.json'), JSON.stringify(this.#bans, null, 2));
  }

  async run(line: string): Promise<string> {
    const words = line.trim().replace(/^\//, '').split(' ');
    const verb = words.shift() ?? '';
    const [a, b, c] = words;
    const rest = (from: number) => words.slice(from).join(' ');
    switch (verb) {
      case 'list': {
        const names = this.serv.players.map((p) =>
          a === 'uuids' ? `${p.username} (${p.uuid})` : p.username,
        );
        return `There are ${names.length} of a max of ${this.maxPlayers} players online: ${names.join(', ')}`;
      }
      case 'op':
        if (!a || !PLAYER_NAME.test(a)) return 'Unknown or incomplete command, see below for error';
        if (this.#ops.some((o) => o.name.toLowerCase() === a.toLowerCase()))
          return 'Nothing changed. The player already is an operator';
        this.#ops.push({
          uuid: this.#player(a)?.uuid ?? offlineUuid(a),
          name: this.#player(a)?.username ?? a,
          level: 4,
        });
        this.#save();
        if (this.#player(a)) this.#player(a)!.op = true;
        return `Made ${this.#player(a)?.username ?? a} a server operator`;
      case 'deop': {
        const at = this.#ops.findIndex((o) => o.name.toLowerCase() === (a ?? '').toLowerCase());
        if (at < 0) return 'Nothing changed. The player is not an operator';
        const [gone] = this.#ops.splice(at, 1);
        this.#save();
        if (this.#player(gone!.name)) this.#player(gone!.name)!.op = false;
        return `Made ${gone!.name} no longer a server operator`;
      }
      case 'kick': {
        const player = a ? this.#player(a) : undefined;
        if (!player) return 'No player was found';
        const reason = rest(1) || 'Kicked by an operator';
        player.kick(reason);
        return `Kicked ${player.username}: ${reason}`;
      }
      case 'ban': {
        if (!a || !PLAYER_NAME.test(a)) return 'Unknown or incomplete command, see below for error';
        if (this.#bans.some((x) => x.name.toLowerCase() === a.toLowerCase()))
          return 'Nothing changed. The player is already banned';
        const player = this.#player(a);
        const reason = rest(1) || 'Banned by an operator.';
        const ban = {
          uuid: player?.uuid ?? offlineUuid(a),
          name: player?.username ?? a,
          source: 'Rcon',
          reason,
        };
        this.#bans.push(ban);
        this.serv.bannedPlayers[ban.uuid] = { time: Date.now(), reason };
        this.#save();
        player?.kick(reason);
        return `Banned ${ban.name}: ${reason}`;
      }
      case 'pardon': {
        const at = this.#bans.findIndex((x) => x.name.toLowerCase() === (a ?? '').toLowerCase());
        if (at < 0) return "Nothing changed. The player isn't banned";
        const [gone] = this.#bans.splice(at, 1);
        delete this.serv.bannedPlayers[gone!.uuid];
        this.#save();
        return `Unbanned ${gone!.name}`;
      }
      case 'banlist': {
        if (this.#bans.length === 0) return 'There are no bans';
        const lines = this.#bans.map((x) => `${x.name} was banned by ${x.source}: ${x.reason}`);
        return [`There are ${this.#bans.length} ban(s):`, ...lines].join('\n');
      }
      case 'gamemode': {
        const mode = GAME_MODES.indexOf((a ?? '') as GameMode);
        const player = b ? this.#player(b) : undefined;
        if (mode < 0) return 'Unknown or incomplete command, see below for error';
        if (!player) return 'No player was found';
        player.setGameMode(mode);
        return `Set ${player.username}'s game mode to ${MODE_TITLES[mode]}`;
      }
      case 'tell':
      case 'msg':
      case 'w': {
        const player = a ? this.#player(a) : undefined;
        if (!player) return 'No player was found';
        player.chat(`Server whispers to you: ${rest(1)}`);
        return `You whisper to ${player.username}: ${rest(1)}`;
      }
      case 'say':
        this.serv.broadcast(`[Rcon] ${rest(0)}`);
        return '';
      case 'give': {
        const player = a ? this.#player(a) : undefined;
        if (!player) return 'No player was found';
        const count = c === undefined ? 1 : Number(c);
        if (!b || !ITEM_ID.test(b) || !Number.isInteger(count) || count < 1 || count > 64)
          return 'Unknown or incomplete command, see below for error';
        try {
          await this.serv.commands.use(
            `give ${player.username} ${b.replace(/^minecraft:/, '')} ${count}`,
            {},
            true,
          );
        } catch {
          return `Unknown item '${b}'`;
        }
        return `Gave ${count} [${b}] to ${player.username}`;
      }
      case 'data': {
        if (a !== 'get' || b !== 'entity' || !c) return 'Unknown or incomplete command, see below for error';
        const player = this.#player(c);
        if (!player) return 'No entity was found';
        const path = words[3];
        const value =
          path === 'playerGameType'
            ? String(player.gameMode)
            : path === 'Pos'
              ? `[${fmt(player.position.x)}, ${fmt(player.position.y)}, ${fmt(player.position.z)}]`
              : path === 'Dimension'
                ? '"minecraft:overworld"'
                : null;
        if (value === null) return `Found no elements matching ${path ?? ''}`;
        return `${player.username} has the following entity data: ${value}`;
      }
      default:
        return 'Unknown or incomplete command, see below for error';
    }
  }
}
