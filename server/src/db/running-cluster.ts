// The embedded PostgreSQL that a running `npm start` keeps under DATA_DIR, found from outside that
// process: by `npm run edge`, `npm run gateway`, `npm run worker` and the operator commands, which run
// beside the server on the same data.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.js';

export interface RunningCluster {
  pid: number;
  port: number;
  host: string;
}

/** The cluster a live postmaster.pid names (line 1 the pid, 4 the port, 6 the listen address), else null. */
export async function findRunningCluster(pgdata: string): Promise<RunningCluster | null> {
  let text: string;
  try {
    text = await readFile(join(pgdata, 'postmaster.pid'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read ${join(pgdata, 'postmaster.pid')}: ${(err as Error).message}`);
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but another user's (the cluster runs as `postgres` when started as root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null; // a stale file from a crash
  }
  const listen = (lines[5] ?? '').split(/[\s,]+/)[0] ?? '';
  const host =
    listen === '' || listen === '*' || listen === '0.0.0.0' ? '127.0.0.1' : listen === '::' ? '::1' : listen;
  return { pid, port, host };
}

/** DATABASE_URL, else the URL of the embedded database of DATA_DIR that a running `npm start` keeps. */
export async function runningDatabaseUrl(config: Config): Promise<string> {
  if (config.databaseUrl !== null) return config.databaseUrl;
  const dir = join(config.dataDir, 'postgres');
  const running = await findRunningCluster(join(dir, 'pgdata'));
  if (!running) {
    throw new Error(`the embedded database in ${dir} is not running: start npm start or set DATABASE_URL`);
  }
  const password = (await readFile(join(dir, 'password'), 'utf8')).trim();
  const host = running.host.includes(':') ? `[${running.host}]` : running.host;
  return `postgres://postgres:${encodeURIComponent(password)}@${host}:${running.port}/postgres`;
}
