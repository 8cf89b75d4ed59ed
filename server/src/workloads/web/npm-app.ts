// The customer's own program (DECISIONS.md §8 "A web app serves what its volume holds"): `npm start` in
// the volume with PORT (where the ingress forwards) and NODE_ENV=production, on the platform's Node and
// npm, the volume's node_modules; its output is the console; when it exits it starts again after 1 s,
// doubling to 60 s, and the console says why. Its own process group, so a stop ends npm, the shell and
// the app together.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { logLine } from '../console-loop.js';

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 60_000;
// A run this long counts as healthy: the next crash waits 1 s again.
const HEALTHY_MS = 60_000;
const STOP_GRACE_MS = 3000;

/** True when `dir`/package.json sets scripts.start. */
export function hasStartScript(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      scripts?: { start?: unknown };
    };
    return typeof pkg.scripts?.start === 'string' && pkg.scripts.start.trim() !== '';
  } catch {
    return false;
  }
}

/** The platform's npm, beside its Node (Debian's and nodejs.org's layouts). */
function npmCli(): string {
  const prefix = dirname(dirname(process.execPath));
  const candidates = [
    join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    join(prefix, 'share', 'nodejs', 'npm', 'bin', 'npm-cli.js'),
    '/usr/share/nodejs/npm/bin/npm-cli.js',
  ];
  return candidates.find((c) => existsSync(c)) ?? candidates[0]!;
}

const describeExit = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `was ended by ${signal}` : `exited with code ${code ?? 0}`;

export interface RunningApp {
  stop(): Promise<void>;
}

export function runNpmApp(dir: string, at: { host: string; port: number }): RunningApp {
  let child: ChildProcess | null = null;
  let delay = FIRST_DELAY_MS;
  let timer: NodeJS.Timeout | null = null;
  let stopping = false;
  const env = {
    ...process.env,
    PORT: String(at.port),
    // Until each unit has its own network namespace, an app listening on every address would meet its
    // neighbours: HOST names the unit's own (frameworks read it).
    HOST: at.host,
    NODE_ENV: 'production',
    // npm asks the registry whether it is the newest: a unit's egress may well be closed.
    npm_config_update_notifier: 'false',
    // The platform's Node first, so the script's `node` is the one running this.
    PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
  };

  const start = () => {
    timer = null;
    const began = Date.now();
    logLine('Starting the app: npm start');
    const proc = spawn(process.execPath, [npmCli(), 'start'], {
      cwd: dir,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout.pipe(process.stdout, { end: false });
    proc.stderr.pipe(process.stdout, { end: false });
    proc.on('error', (err) => logLine(`Cannot start the app: ${err.message}`, 'ERROR'));
    proc.on('close', (code, signal) => {
      child = null;
      if (stopping) return;
      if (Date.now() - began >= HEALTHY_MS) delay = FIRST_DELAY_MS;
      logLine(`The app ${describeExit(code, signal)}; starting it again in ${delay / 1000} s`, 'WARN');
      timer = setTimeout(start, delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    });
  };
  start();

  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      const running = child;
      if (!running?.pid) return;
      const group = -running.pid;
      const ended = new Promise<void>((resolve) => running.once('close', () => resolve()));
      try {
        process.kill(group, 'SIGTERM');
      } catch {
        return;
      }
      const late = setTimeout(() => {
        try {
          process.kill(group, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }, STOP_GRACE_MS);
      await ended;
      clearTimeout(late);
    },
  };
}
