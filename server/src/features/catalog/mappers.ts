// Row → API shape, as allow-lists: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { OperatingSystemRow, ProductRow } from './store.js';

type Schemas = components['schemas'];

export const toProduct = (r: ProductRow): Schemas['CatalogProduct'] => ({
  id: r.id,
  slug: r.slug,
  name: r.name,
  kind: r.kind,
  cpu: r.cpu,
  memory_mb: r.memory_mb,
  storage_gb: r.storage_gb,
  features: r.features as Schemas['ProductFeature'][],
  monthly_fee: r.monthly_fee,
});

export const toOperatingSystem = (r: OperatingSystemRow): Schemas['OperatingSystemImage'] => ({
  id: r.id,
  name: r.name,
  enabled: r.enabled,
  min_cpu: r.min_cpu,
  min_memory_mb: r.min_memory_mb,
  min_storage_gb: r.min_storage_gb,
  monthly_fee: r.monthly_fee,
});
