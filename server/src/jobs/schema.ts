// The job queue's own tables (graphile-worker's `graphile_worker` schema), installed and upgraded by
// our migration step (db/migrate.ts) on the connection that holds the migration lock, so every
// database our migrations made also has a queue to enqueue into, and a cloned test database carries
// it from its template.
//
// graphile-worker migrates through a node-postgres pool; ours is postgres.js. Its migration code asks
// the pool for a client and sends plain text queries (several statements each) and a few
// parameterised ones, which a reserved postgres.js connection answers just as well: a small adapter
// instead of a second driver's pool and a second connection.
import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import type postgres from 'postgres';
import { Logger, runMigrations } from 'graphile-worker';

/** The PostgreSQL schema of the queue; set explicitly everywhere, so GRAPHILE_WORKER_SCHEMA changes nothing. */
export const JOB_SCHEMA = 'graphile_worker';

type Query = string | { text: string; values?: unknown[] };

/** Installs or upgrades the queue's schema on `connection` (a reserved connection or a transaction-free one). */
export async function installJobQueueSchema(connection: postgres.ReservedSql | postgres.Sql): Promise<void> {
  const client = {
    async query(query: Query, values?: unknown[]) {
      const text = typeof query === 'string' ? query : query.text;
      const params = (typeof query === 'string' ? values : (query.values ?? values)) ?? [];
      // No parameters: the simple protocol, which runs a file of several statements as one query.
      const rows = await connection.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      return { rows: [...rows], rowCount: rows.count };
    },
    release() {},
  };
  const pool = Object.assign(new EventEmitter(), {
    options: { max: 1 },
    connect: async () => client,
  });
  // graphile-worker warns on stderr about a pool without error listeners; this one raises nothing.
  pool.on('error', () => {});
  pool.on('connect', () => {});
  await runMigrations({
    pgPool: pool as unknown as Pool,
    schema: JOB_SCHEMA,
    // Quiet: a migration that fails throws, and that is what the caller reports.
    logger: new Logger(() => () => {}),
  });
}
