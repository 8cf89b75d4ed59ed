// The arena game's server program (the `arena-game` product): Debian's ioquake3 dedicated server
// (`ioq3ded`, package ioquake3-server) on the unit's address, with a game directory of ours holding the
// tiny map the platform makes (Debian ships no game data; the game logic is the package's own
// qagame library). `sv_hostname` is the service's name; the RCON password arrives in the environment
// only and is handed to the server on its console, never on its command line (visible in `ps`).
// Without ioq3ded installed it runs a stand-in console that answers no queries: the service still
// provisions and its live info says `offline`.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { access, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GAME_LIBRARY, IOQ3DED } from '../games/arena/install.js';
import { tinyMap } from '../games/arena/tiny-map.js';
import { GAME_ENV } from '../games/unit-env.js';
import { listenAddress, logLine, runConsole } from './console-loop.js';

const GAME_DIR = 'arena';

/** A console value ioquake3 accepts in an info string and cannot break out of its quotes with. */
export function consoleValue(text: string): string {
  return [...text]
    .filter((c) => c >= ' ' && c !== '\u007f' && c !== '\\' && c !== '"' && c !== ';')
    .join('')
    .slice(0, 63);
}

async function installed(): Promise<boolean> {
  try {
    await Promise.all([access(IOQ3DED), access(GAME_LIBRARY)]);
    return true;
  } catch {
    return false;
  }
}

/** The base and home paths ioq3ded reads, laid out in the unit's home (its volume). */
async function layOut(home: string): Promise<{ base: string; homePath: string }> {
  const base = join(home, '.arena', 'base');
  const homePath = join(home, '.arena', 'home');
  await mkdir(join(base, GAME_DIR, 'maps'), { recursive: true });
  await mkdir(homePath, { recursive: true });
  await writeFile(join(base, GAME_DIR, 'maps', 'tiny.bsp'), tinyMap());
  // ioq3ded refuses to start without a default.cfg in the game directory.
  await writeFile(join(base, GAME_DIR, 'default.cfg'), 'seta g_motd "Welcome"\n');
  await symlink(GAME_LIBRARY, join(base, GAME_DIR, 'qagamex86_64.so')).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return { base, homePath };
}

async function runIoq3ded(at: { host: string; port: number }): Promise<void> {
  const { base, homePath } = await layOut(process.env.HOME ?? process.cwd());
  const hostname = consoleValue(process.env[GAME_ENV.name] ?? 'Arena');
  const child = spawn(
    IOQ3DED,
    [
      '+set',
      'dedicated',
      '1',
      '+set',
      'com_basegame',
      GAME_DIR,
      '+set',
      'fs_basepath',
      base,
      '+set',
      'fs_homepath',
      homePath,
      '+set',
      'net_ip',
      at.host,
      '+set',
      'net_port',
      String(at.port),
      '+set',
      'net_enabled',
      '1',
      '+set',
      'vm_game',
      '0',
      '+set',
      'bot_enable',
      '0',
      '+set',
      'sv_hostname',
      hostname,
      '+map',
      'tiny',
    ],
    { stdio: ['pipe', 'inherit', 'inherit'] },
  );
  const password = consoleValue(process.env[GAME_ENV.rconPassword] ?? '');
  if (password) child.stdin.write(`set rconpassword "${password}"\n`);
  process.stdin.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  const stop = () => child.kill('SIGTERM');
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

function runStandIn(at: { host: string; port: number } | null): void {
  logLine('Arena game dedicated server starting (ioq3ded is not installed: answering no queries)');
  if (at) {
    const socket = createSocket('udp4');
    socket.on('error', (err: NodeJS.ErrnoException) =>
      logLine(`Cannot listen: ${err.code ?? 'error'}`, 'ERROR'),
    );
    socket.bind(at.port, at.host, () => logLine(`Opening IP socket: ${at.host}:${at.port}`));
  }
  logLine('Server ready');
  runConsole('the arena', {
    status: (_args, out) => out('map: tiny, num score ping name: (no players)'),
    say: (args, out) => out(`broadcast: print "server: ${args}"`),
    echo: (args, out) => out(args),
  });
}

const at = listenAddress('udp', 27960);
if (at && (await installed())) await runIoq3ded(at);
else runStandIn(at);
