// Rows to API shapes: allow-lists, so a new column never leaks.
import type { components } from '../../../../generated/api.js';
import type { ProjectRow, ProjectStatsRow } from './store.js';

type Schemas = components['schemas'];

export const toProject = (p: ProjectRow): Schemas['Project'] => ({
  id: p.id,
  organization_id: p.organization_id,
  name: p.name,
  slug: p.slug,
  description: p.description,
  created_at: p.created_at.toISOString(),
  updated_at: p.updated_at.toISOString(),
  managed: p.managed,
});

export const toProjectStats = (s: ProjectStatsRow): Schemas['ProjectStats'] => ({
  project_id: s.project_id,
  resource_count: Number(s.resource_count),
  cycle_spend: s.cycle_spend.map((c) => ({ currency: c.currency, amount: c.amount })),
});
