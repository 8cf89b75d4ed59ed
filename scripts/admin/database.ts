// The database the operator command works on, the one `npm start` uses: DATABASE_URL when set, else
// the embedded cluster of DATA_DIR (server/src/db/embedded.ts). A running cluster (the server is up)
// is found through its postmaster.pid; when none runs, the command starts the cluster itself, applies
// the migrations, and stops it again when done.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import {
  findRunningCluster as findCluster,
  type RunningCluster,
} from '../../server/src/db/running-cluster.js';

/** An expected failure: its message is printed as it is, exit code 1. */
export class AdminError extends Error {
  override name = 'AdminError';
}

export interface AdminDatabase {
  sql: Sql;
  /** Secrets that must never appear in output (the database password). */
  secrets: string[];
  close(): Promise<void>;
}

/** The running cluster of `pgdata` (server/src/db/running-cluster.ts), its failures as the operator's. */
export async function findRunningCluster(pgdata: string): Promise<RunningCluster | null> {
  try {
    return await findCluster(pgdata);
  } catch (err) {
    throw new AdminError((err as Error).message);
  }
}

export async function openDatabase(config: Config, notice: (line: string) => void): Promise<AdminDatabase> {
  if (config.databaseUrl !== null) {
    const url = new URL(config.databaseUrl);
    const secrets = [url.password, decodeURIComponent(url.password)].filter(Boolean);
    const sql = connect(config.databaseUrl, { max: 2 });
    return { sql, secrets, close: () => sql.end({ timeout: 5 }) };
  }

  const dir = join(config.dataDir, 'postgres');
  const pgdata = join(dir, 'pgdata');
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    throw new AdminError(
      `no embedded database in ${dir}: start the server once (npm start) with this DATA_DIR, or set DATABASE_URL`,
    );
  }
  const running = await findRunningCluster(pgdata);
  if (running) {
    let password: string;
    try {
      password = (await readFile(join(dir, 'password'), 'utf8')).trim();
    } catch (err) {
      throw new AdminError(
        `cannot read the embedded database's password in ${dir} (${(err as NodeJS.ErrnoException).code ?? 'error'}): ` +
          'run this as the user who runs npm start',
      );
    }
    const host = running.host.includes(':') ? `[${running.host}]` : running.host;
    const sql = connect(
      `postgres://postgres:${encodeURIComponent(password)}@${host}:${running.port}/postgres`,
      { max: 2 },
    );
    return { sql, secrets: [password, encodeURIComponent(password)], close: () => sql.end({ timeout: 5 }) };
  }

  notice(`the server is not running: starting the embedded database in ${dir} for this command`);
  let embedded: EmbeddedDatabase;
  try {
    embedded = await startEmbeddedPostgres({ dir, persistent: true });
  } catch (err) {
    throw new AdminError((err as Error).message);
  }
  const url = new URL(embedded.url);
  const secrets = [decodeURIComponent(url.password), url.password];
  const sql = connect(embedded.url, { max: 2 });
  const close = async () => {
    await sql.end({ timeout: 5 });
    await embedded.stop();
  };
  try {
    await migrate(sql);
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return { sql, secrets, close };
}
