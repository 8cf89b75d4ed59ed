import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { connect, type Sql } from '../../server/src/db/client.js';
import { loadMigrations, migrate } from '../../server/src/db/migrate.js';
import { databaseUrl } from '../support/db-url.js';

let admin: Sql;
let name: string;
let a: Sql;
let b: Sql;

beforeAll(async () => {
  admin = connect(inject('adminDatabaseUrl'), { max: 1 });
  name = `m_${randomUUID().replace(/-/g, '')}`;
  await admin.unsafe(`create database ${name}`);
  a = connect(databaseUrl(inject('adminDatabaseUrl'), name), { max: 2 });
  b = connect(databaseUrl(inject('adminDatabaseUrl'), name), { max: 2 });
});
afterAll(async () => {
  await a.end();
  await b.end();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

it('applies each migration once when two processes start together, and records it', async () => {
  const [first, second] = await Promise.all([migrate(a), migrate(b)]);
  const all = (await loadMigrations()).map((m) => `${m.version}_${m.name}`);
  expect([...first!, ...second!].sort()).toEqual(all.sort());
  const rows = await a<{ version: string }[]>`select version from schema_migrations order by version`;
  expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.slice(0, 4)));
  expect(await migrate(a)).toEqual([]);
});

it('refuses to start when an applied migration was edited afterwards', async () => {
  const [m] = await loadMigrations();
  await expect(migrate(a, [{ ...m!, checksum: 'edited' }])).rejects.toThrow(/was changed after it was applied/);
});

it('rolls back a failing migration whole and records nothing of it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mig-'));
  await writeFile(join(dir, '9001_broken.sql'), 'create table half_done (id int);\nselect * from no_such_table;');
  const broken = await loadMigrations(dir);
  await expect(migrate(a, [...(await loadMigrations()), ...broken])).rejects.toThrow();
  const [exists] = await a<{ t: string | null }[]>`select to_regclass('half_done')::text as t`;
  expect(exists!.t).toBeNull();
  const rows = await a`select 1 from schema_migrations where version = '9001'`;
  expect(rows).toHaveLength(0);
});
