// Migration 0006 gives every account that existed before it a personal organization with its managed
// games project, as signup does for new ones.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connect, type Sql } from '../../server/src/db/client.js';
import { loadMigrations, migrate } from '../../server/src/db/migrate.js';
import { databaseUrl } from '../support/db-url.js';

let admin: Sql;
let sql: Sql;
let name: string;

beforeAll(async () => {
  admin = connect(inject('adminDatabaseUrl'), { max: 1 });
  name = `m_${randomUUID().replace(/-/g, '')}`;
  await admin.unsafe(`create database ${name}`);
  sql = connect(databaseUrl(inject('adminDatabaseUrl'), name), { max: 2 });
});
afterAll(async () => {
  await sql.end();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

it('makes a personal organization, owner membership and games project for each existing account', async () => {
  const all = await loadMigrations();
  const before = all.filter((m) => m.version < '0006');
  await migrate(sql, before);
  const users = [randomUUID(), randomUUID()];
  for (const [i, id] of users.entries()) {
    await sql`
      insert into users (id, email, name, language, created_at, updated_at)
      values (${id}, ${`old${i}@example.test`}, ${`Old Timer ${i}`}, 'en', now(), now())`;
  }
  await migrate(sql, all);
  const rows = await sql<{ user_id: string; name: string; slug: string; role: string; project: string; managed: boolean }[]>`
    select o.personal_owner_id as user_id, o.name, o.slug, m.role, p.slug as project, p.managed
    from organizations o
    join organization_members m on m.organization_id = o.id and m.user_id = o.personal_owner_id
    join projects p on p.organization_id = o.id
    order by o.name`;
  expect(rows).toEqual([
    { user_id: users[0], name: 'Old Timer 0', slug: expect.stringMatching(/^u-[0-9a-f]{12}$/), role: 'owner', project: 'games', managed: true },
    { user_id: users[1], name: 'Old Timer 1', slug: expect.stringMatching(/^u-[0-9a-f]{12}$/), role: 'owner', project: 'games', managed: true },
  ]);
});
