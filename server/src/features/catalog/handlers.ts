// The catalog (DECISIONS.md §4 "Catalog"): products, their plans and fees, and the operating-system
// images of VPS products. Prices are shown before sign-up, so every route is anonymous.
import { PUBLIC_READ } from '../../http/default-headers.js';
import { notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { toOperatingSystem, toProduct } from './mappers.js';
import * as store from './store.js';

export const catalogHandlers: AreaHandlers<
  'catalogProductList' | 'catalogProductGet' | 'catalogProductOperatingSystemList'
> = {
  async catalogProductList({ ctx }) {
    const rows = await store.listProducts(ctx.sql);
    return { status: 200, body: rows.map(toProduct), headers: PUBLIC_READ };
  },

  async catalogProductGet({ path, ctx }) {
    const row = await store.findProduct(ctx.sql, path.id);
    if (!row) throw notFound('No such product.');
    return { status: 200, body: toProduct(row), headers: PUBLIC_READ };
  },

  async catalogProductOperatingSystemList({ path, ctx }) {
    const product = await store.findProduct(ctx.sql, path.id);
    if (!product) throw notFound('No such product.');
    // Only VPS products have images; the table holds none for other kinds.
    const rows = product.kind === 'vps' ? await store.listOperatingSystems(ctx.sql, product.id) : [];
    return { status: 200, body: rows.map(toOperatingSystem), headers: PUBLIC_READ };
  },
};
