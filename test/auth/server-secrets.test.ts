import { afterAll, beforeAll, expect, it } from 'vitest';
import { getOrCreateSecret, SECRET_NAMES } from '../../server/src/auth/crypto/server-secrets.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createTestDatabase } from '../support/app.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
// Two pools stand for two API processes.
let a: Sql;
let b: Sql;

beforeAll(async () => {
  db = await createTestDatabase();
  a = connect(db.url, { max: 4 });
  b = connect(db.url, { max: 4 });
});
afterAll(async () => {
  await a.end();
  await b.end();
  await db.drop();
});

it('creates a secret once: every process asking at the same moment gets the same bytes', async () => {
  const values = await Promise.all(
    Array.from({ length: 10 }, (_, i) => getOrCreateSecret(i % 2 ? a : b, SECRET_NAMES.refreshSuccessor)),
  );
  expect(values[0]).toHaveLength(32);
  for (const v of values) expect(v.equals(values[0]!)).toBe(true);
  const rows = await a`select name from server_secrets where name = ${SECRET_NAMES.refreshSuccessor}`;
  expect(rows).toHaveLength(1);
});

it('keeps the first value for good', async () => {
  const first = await getOrCreateSecret(a, 'keeps-first');
  expect((await getOrCreateSecret(b, 'keeps-first')).equals(first)).toBe(true);
  expect((await getOrCreateSecret(a, 'keeps-first', 16)).equals(first)).toBe(true);
});

it('gives each name its own secret', async () => {
  const x = await getOrCreateSecret(a, SECRET_NAMES.apiTokenDigest);
  const y = await getOrCreateSecret(a, 'another-pepper');
  expect(x.equals(y)).toBe(false);
});

it('refuses a stored secret shorter than asked for, and leaves it as it was', async () => {
  const short = await getOrCreateSecret(a, 'short-one', 16);
  await expect(getOrCreateSecret(a, 'short-one', 32)).rejects.toThrow(/holds 16 bytes, 32 required/);
  const [row] = await a<{ value: Buffer }[]>`select value from server_secrets where name = 'short-one'`;
  expect(row!.value.equals(short)).toBe(true);
});

it('refuses to make a secret under 16 bytes, and stores nothing', async () => {
  await expect(getOrCreateSecret(a, 'tiny', 8)).rejects.toThrow(RangeError);
  expect(await a`select 1 from server_secrets where name = 'tiny'`).toHaveLength(0);
});

it('refuses a name outside the naming rule, and stores nothing', async () => {
  await expect(getOrCreateSecret(a, 'Not A Name')).rejects.toMatchObject({ code: '23514' });
  expect(await a`select 1 from server_secrets where name = 'Not A Name'`).toHaveLength(0);
});
