// Every account has a personal organization, made with it in the same transaction, holding the
// managed `games` project (document 1, "Organizations", "Projects"). Accounts that existed before are
// given theirs by migration 0006.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export const GAMES_SLUG = 'games';

/** A slug from the person's name: lowercase ASCII words joined by hyphens, then a random suffix. */
export function personalSlug(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  const suffix = randomBytes(5).toString('hex').slice(0, 8);
  return base.length >= 2 ? `${base}-${suffix}` : `u-${suffix}`;
}

export async function createPersonalOrganization(db: Db, user: { id: string; name: string }, now: Date): Promise<string> {
  const id = randomUUID();
  // A random suffix makes a clash unlikely; a clash is retried with another one.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const rows = await db`
      insert into organizations (id, name, slug, personal_owner_id, created_at, updated_at)
      values (${id}, ${user.name.slice(0, 100)}, ${personalSlug(user.name)}, ${user.id}, ${now}, ${now})
      on conflict (slug) do nothing
      returning id`;
    if (rows.length === 1) break;
    if (attempt === 4) throw new Error('could not find a free slug for a personal organization');
  }
  await db`
    insert into organization_members (organization_id, user_id, role, created_at)
    values (${id}, ${user.id}, 'owner', ${now})`;
  await db`
    insert into projects (id, organization_id, name, slug, managed, created_at, updated_at)
    values (${randomUUID()}, ${id}, 'Games', ${GAMES_SLUG}, true, ${now}, ${now})`;
  return id;
}
