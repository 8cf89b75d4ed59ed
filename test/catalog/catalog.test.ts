// The catalog (DECISIONS.md §4 "Catalog"; SUBSTRATE.md "The catalog the embedded default ships"):
// the three anonymous reads through the SDK against the real app.
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { refusal } from '../support/refusal.js';

let app: TestApp;
let client: ReturnType<typeof createClient>;

beforeAll(async () => {
  app = await startTestApp();
  client = createClient({ baseUrl: app.baseUrl, retries: 0 });
});
afterAll(() => app.close());

const MONEY = /^[0-9]+\.[0-9]{2}$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function productBySlug(slug: string) {
  const product = (await client.catalogProductList()).find((p) => p.slug === slug);
  if (!product) throw new Error(`no product ${slug}`);
  return product;
}

describe('GET /catalog/products', () => {
  it('lists the embedded catalog of SUBSTRATE.md, ordered by kind', async () => {
    const products = await client.catalogProductList();
    expect(products.map((p) => [p.slug, p.kind])).toEqual([
      ['vps-small', 'vps'],
      ['block-game', 'block_game'],
      ['arena-game', 'arena_game'],
      ['web-app', 'web_app'],
    ]);
    const features = Object.fromEntries(products.map((p) => [p.slug, [...p.features].sort()]));
    expect(features).toEqual({
      'vps-small': ['backups', 'external_access', 'firewall', 'reinstall', 'screen', 'shell'],
      'block-game': [
        'backups',
        'console',
        'domain_connect',
        'external_access',
        'files',
        'game_subdomain',
        'imports',
        'roster',
        'sftp',
        'shell',
      ],
      'arena-game': ['console', 'external_access', 'files', 'live_info'],
      'web-app': ['backups', 'custom_domains', 'files', 'imports', 'sftp', 'shell'],
    });
    for (const p of products) {
      expect(Object.keys(p).sort()).toEqual(
        ['cpu', 'features', 'id', 'kind', 'memory_mb', 'monthly_fee', 'name', 'slug', 'storage_gb'].sort(),
      );
      expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(p.name.length).toBeGreaterThan(0);
      for (const n of [p.cpu, p.memory_mb, p.storage_gb]) expect(Number.isInteger(n) && n > 0).toBe(true);
      expect(new Set(p.features).size).toBe(p.features.length);
    }
  });

  it('answers money as decimal strings on the wire, never numbers', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/catalog/products`);
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw).toMatch(/"monthly_fee":"6\.50"/);
    const body = JSON.parse(raw) as { slug: string; monthly_fee: unknown }[];
    for (const p of body) {
      expect(typeof p.monthly_fee).toBe('string');
      expect(p.monthly_fee).toMatch(MONEY);
    }
    expect(body.map((p) => [p.slug, p.monthly_fee])).toEqual([
      ['vps-small', '6.50'],
      ['block-game', '8.00'],
      ['arena-game', '4.00'],
      ['web-app', '5.00'],
    ]);
  });

  it('reads no caller identity: a junk credential is ignored', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/catalog/products`, {
      headers: { authorization: 'Bearer junk' },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(4);
  });

  it('orders by kind, then monthly fee, then slug, whatever order rows were stored in', async () => {
    const extra = '5c0a7a10-0000-4000-8000-0000000000ff';
    await app.sql`
      insert into catalog_products (id, slug, name, kind, cpu, memory_mb, storage_gb, features, monthly_fee)
      values (${extra}, 'vps-cheap', 'VPS Cheap', 'vps', 1, 512, 10, ${['shell']}, 3.00)`;
    try {
      const slugs = (await client.catalogProductList()).map((p) => p.slug);
      expect(slugs).toEqual(['vps-cheap', 'vps-small', 'block-game', 'arena-game', 'web-app']);
    } finally {
      await app.sql`delete from catalog_products where id = ${extra}`;
    }
  });
});

describe('GET /catalog/products/{id}', () => {
  it('answers the product as the list does', async () => {
    for (const listed of await client.catalogProductList()) {
      expect(await client.catalogProductGet({ path: { id: listed.id } })).toEqual(listed);
    }
  });

  it('answers 404 not-found for an unknown id and 400 for a malformed one', async () => {
    const missing = await refusal(client.catalogProductGet({ path: { id: UNKNOWN } }));
    expect([missing.status, missing.code]).toEqual([404, 'not-found']);
    const bad = await refusal(client.catalogProductGet({ path: { id: 'vps-small' } }));
    expect([bad.status, bad.code]).toEqual([400, 'invalid-request']);
    expect(bad.errors).toEqual([expect.objectContaining({ location: 'path', pointer: 'id' })]);
  });
});

describe('GET /catalog/products/{id}/operating-systems', () => {
  it('lists the VPS images, with the variety a reinstall needs', async () => {
    const vps = await productBySlug('vps-small');
    const images = await client.catalogProductOperatingSystemList({ path: { id: vps.id } });
    expect(images.map((i) => i.id)).toEqual([...images.map((i) => i.id)].sort());
    for (const i of images) {
      expect(Object.keys(i).sort()).toEqual(
        ['enabled', 'id', 'min_cpu', 'min_memory_mb', 'min_storage_gb', 'monthly_fee', 'name'].sort(),
      );
      expect(typeof i.monthly_fee).toBe('string');
      expect(i.monthly_fee).toMatch(MONEY);
    }
    const fits = (i: (typeof images)[number]) =>
      i.min_cpu <= vps.cpu && i.min_memory_mb <= vps.memory_mb && i.min_storage_gb <= vps.storage_gb;
    const usable = images.filter((i) => i.enabled && fits(i));
    // At least two enabled images the plan meets at the same fee.
    const byFee = new Map<string, string[]>();
    for (const i of usable) byFee.set(i.monthly_fee, [...(byFee.get(i.monthly_fee) ?? []), i.id]);
    expect(Math.max(...[...byFee.values()].map((ids) => ids.length))).toBeGreaterThanOrEqual(2);
    expect(byFee.get('0.00')).toEqual(expect.arrayContaining(['debian-12', 'ubuntu-24.04']));
    // One disabled image.
    expect(images.filter((i) => !i.enabled).map((i) => i.id)).toEqual(['debian-11']);
    // One whose minimum storage (alone) the plan does not meet.
    const tooBig = images.filter(
      (i) =>
        i.enabled &&
        i.min_storage_gb > vps.storage_gb &&
        i.min_cpu <= vps.cpu &&
        i.min_memory_mb <= vps.memory_mb,
    );
    expect(tooBig.map((i) => i.id)).toEqual(['ubuntu-24.04-desktop']);
    // One the plan meets at a different fee.
    const pricier = usable.filter((i) => i.monthly_fee !== '0.00');
    expect(pricier.map((i) => [i.id, i.monthly_fee])).toEqual([['windows-server-2022', '15.00']]);
  });

  it('answers an empty list for products of other kinds', async () => {
    for (const slug of ['block-game', 'arena-game', 'web-app']) {
      const product = await productBySlug(slug);
      expect(await client.catalogProductOperatingSystemList({ path: { id: product.id } })).toEqual([]);
    }
  });

  it('answers 404 not-found for an unknown product', async () => {
    const missing = await refusal(client.catalogProductOperatingSystemList({ path: { id: UNKNOWN } }));
    expect([missing.status, missing.code]).toEqual([404, 'not-found']);
  });
});

describe('the embedded default', () => {
  it('has fixed ids, and seeding it again changes nothing', async () => {
    const before = await client.catalogProductList();
    expect(before.map((p) => p.id)).toEqual([
      '5c0a7a10-0000-4000-8000-000000000001',
      '5c0a7a10-0000-4000-8000-000000000002',
      '5c0a7a10-0000-4000-8000-000000000003',
      '5c0a7a10-0000-4000-8000-000000000004',
    ]);
    const { readFile } = await import('node:fs/promises');
    const migration = await readFile(
      new URL('../../server/migrations/0013_catalog.sql', import.meta.url),
      'utf8',
    );
    const seed = migration.slice(migration.indexOf('insert into catalog_products'));
    const imagesBefore = await app.sql`select * from catalog_operating_systems order by product_id, id`;
    // A staff edit made since survives a re-run.
    await app.sql`update catalog_products set monthly_fee = 7.25 where slug = 'web-app'`;
    try {
      await app.sql.unsafe(seed);
      const after = await client.catalogProductList();
      expect(after).toEqual(before.map((p) => (p.slug === 'web-app' ? { ...p, monthly_fee: '7.25' } : p)));
      expect(await app.sql`select * from catalog_operating_systems order by product_id, id`).toEqual(
        imagesBefore,
      );
    } finally {
      await app.sql`update catalog_products set monthly_fee = 5.00 where slug = 'web-app'`;
    }
  });
});
