// All SQL of the catalog. Money is read as PostgreSQL prints its numeric(10, 2) (`6.50`): it never
// passes through a JS float.
import type { Db } from '../../db/client.js';

export interface ProductRow {
  id: string;
  slug: string;
  name: string;
  kind: 'vps' | 'block_game' | 'arena_game' | 'web_app';
  cpu: number;
  memory_mb: number;
  storage_gb: number;
  features: string[];
  monthly_fee: string;
}

export interface OperatingSystemRow {
  id: string;
  name: string;
  enabled: boolean;
  min_cpu: number;
  min_memory_mb: number;
  min_storage_gb: number;
  monthly_fee: string;
}

/** Every product: by kind (vps, block_game, arena_game, web_app), then monthly fee, then slug. */
export async function listProducts(db: Db): Promise<ProductRow[]> {
  return db<ProductRow[]>`
    select id, slug, name, kind, cpu, memory_mb, storage_gb, features, monthly_fee::text as monthly_fee
    from catalog_products
    order by array_position(array['vps', 'block_game', 'arena_game', 'web_app'], kind), monthly_fee, slug`;
}

export async function findProduct(db: Db, id: string): Promise<ProductRow | undefined> {
  const [row] = await db<ProductRow[]>`
    select id, slug, name, kind, cpu, memory_mb, storage_gb, features, monthly_fee::text as monthly_fee
    from catalog_products
    where id = ${id}`;
  return row;
}

/** A product's images, disabled ones included, ordered by id. */
export async function listOperatingSystems(db: Db, productId: string): Promise<OperatingSystemRow[]> {
  return db<OperatingSystemRow[]>`
    select id, name, enabled, min_cpu, min_memory_mb, min_storage_gb, monthly_fee::text as monthly_fee
    from catalog_operating_systems
    where product_id = ${productId}
    order by id collate "C"`;
}
