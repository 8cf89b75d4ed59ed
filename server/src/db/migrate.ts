// Forward-only SQL migrations from server/migrations, recorded in schema_migrations with a checksum,
// applied under an advisory lock so that processes starting together do not race. The job queue's
// schema (graphile-worker's, jobs/schema.ts) is installed first under the same lock, so a migration
// may enqueue jobs and every migrated database can take them.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installJobQueueSchema } from '../jobs/schema.js';
import type { Sql } from './client.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
// An arbitrary constant shared by every process of this application.
const LOCK_KEY = 7_315_002_001;

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

export async function migrate(sql: Sql, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  const reserved = await sql.reserve();
  try {
    await reserved`select pg_advisory_lock(${LOCK_KEY})`;
    await installJobQueueSchema(reserved);
    await reserved`
      create table if not exists schema_migrations (
        version text primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`;
    const rows = await reserved<{ version: string; checksum: string }[]>`select version, checksum from schema_migrations`;
    const applied = new Map(rows.map((r) => [r.version, r.checksum]));
    const done: string[] = [];
    for (const m of all) {
      const seen = applied.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum) {
          throw new Error(`migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await reserved.unsafe('begin');
      try {
        await reserved.unsafe(m.sql);
        await reserved`insert into schema_migrations (version, name, checksum) values (${m.version}, ${m.name}, ${m.checksum})`;
        await reserved.unsafe('commit');
      } catch (err) {
        await reserved.unsafe('rollback');
        throw err;
      }
      done.push(`${m.version}_${m.name}`);
    }
    return done;
  } finally {
    await reserved`select pg_advisory_unlock(${LOCK_KEY})`.catch(() => {});
    reserved.release();
  }
}
