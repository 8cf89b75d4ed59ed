// Staff's parent domains (DECISIONS.md §6 "DNS and domains", `manage_services`): the zones game
// subdomains are taken under, each served by the platform's DNS server as its own zone.
import { requireSystemPermission } from '../../authz/staff.js';
import { conflict, invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { idempotent } from '../../operations/idempotency.js';
import { isWithin } from '../domains/names.js';
import * as store from './store.js';
import type { ParentDomainRow } from './store.js';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

const toParentDomain = (r: ParentDomainRow) => ({
  id: r.id,
  name: r.name,
  created_at: r.created_at.toISOString(),
});

const badName = (message: string) =>
  invalidFieldValue(message, [{ location: 'body', pointer: '/name', message }]);

/** The zone's name, or why it cannot be one. Any TLD (`play.test` is the embedded default's). */
function zoneName(input: string): string {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  if (name.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
    throw badName(
      'A parent domain is a host name of at least two labels of letters, digits and inner hyphens.',
    );
  }
  return name;
}

export const parentDomainHandlers: AreaHandlers<
  'adminParentDomainList' | 'adminParentDomainCreate' | 'adminParentDomainDelete'
> = {
  async adminParentDomainList({ auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
    return { status: 200, body: { data: (await store.listParentDomains(ctx.sql)).map(toParentDomain) } };
  },

  async adminParentDomainCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
    const name = zoneName(body.name);
    const platform = ctx.config.platformDomain;
    if (isWithin(name, platform) || isWithin(platform, name)) {
      throw badName(`${name} overlaps ${platform}, the platform's own zone.`);
    }
    return idempotent(ctx, auth, 'adminParentDomainCreate', body, async (tx) => {
      await store.lockRegistrations(tx);
      const existing = await store.listParentDomains(tx);
      if (existing.some((p) => p.name === name))
        throw conflict('hostname-taken', `${name} is a parent domain already.`);
      const overlap = existing.find((p) => isWithin(name, p.name) || isWithin(p.name, name));
      if (overlap) throw badName(`${name} overlaps ${overlap.name}, a parent domain already.`);
      const row = await store.insertParentDomain(tx, name, ctx.clock.now());
      if (!row) throw conflict('hostname-taken', `${name} is a parent domain already.`);
      return { status: 201 as const, body: toParentDomain(row) };
    });
  },

  async adminParentDomainDelete({ path, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
    const result = await ctx.sql.begin((tx) => store.deleteParentDomain(tx, path.id.toLowerCase()));
    if (result === false) throw notFound('No such parent domain.');
    if (result === 'in-use') {
      throw conflict('parent-domain-in-use', 'Game subdomains or custom domains use this parent domain; they must go first.');
    }
    return { status: 204 };
  },
};
