// Game subdomains (document 2 §2 "Game subdomain", §3, §4 "Game subdomains"; DECISIONS.md §6 "DNS and
// domains"): a service's name under a staff parent domain, whose `A` and `SRV _minecraft._tcp` records
// the platform's own DNS serves from the row (dns-server/). Records are made in the request's
// transaction when the service has its primary allocation, else by the job queue (tasks.ts).
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Permission } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { enqueue } from '../../jobs/queue.js';
import { idempotent } from '../../operations/idempotency.js';
import { requireService, serviceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { parseSubdomain } from './names.js';
import * as store from './store.js';
import type { GameSubdomainRow } from './store.js';
import { jobKeyOf } from './tasks.js';

/** Game subdomains per service (document 2 §8). */
const LIMIT = 1;

const toSubdomain = (r: GameSubdomainRow) => ({
  id: r.id,
  subdomain: r.subdomain,
  parent_domain_id: r.parent_domain_id,
  parent_domain_name: r.parent_domain_name,
  hostname: `${r.subdomain}.${r.parent_domain_name}`,
  status: r.status,
  has_srv_record: r.has_srv_record,
  record_ip: r.record_ip,
  record_port: r.record_port,
  last_synced_at: r.last_synced_at?.toISOString() ?? null,
  last_error: r.last_error,
  created_at: r.created_at.toISOString(),
});

type Reason = 'zone_unavailable' | 'invalid_subdomain' | 'subdomain_taken' | 'already_has_subdomain';
const DETAIL: Record<Reason, string> = {
  zone_unavailable: 'No such parent domain: pick one of the zones the list names.',
  invalid_subdomain: '',
  subdomain_taken: 'This name is taken.',
  already_has_subdomain: 'The service already has its game subdomain; rename it instead.',
};
const refused = (reason: Reason, detail = DETAIL[reason]) =>
  unprocessable('game-subdomain-refused', detail, reason);

/**
 * The service, for a caller allowed `permission`, of a product with game subdomains and external
 * access, serviceable (document 2 §4: suspended or ended services 404 like someone else's).
 */
async function gameSubdomainService(
  db: Db,
  serviceId: string,
  auth: UserAuth,
  permission: Permission,
  lock = false,
): Promise<ServiceAccessRow> {
  const access = await requireService(db, { serviceId }, auth, permission, { lock });
  const features = await store.productFeatures(db, access.service.product_id);
  if (!features.includes('game_subdomain') || !features.includes('external_access') || !serviceable(access))
    throw serviceNotFound();
  return access;
}

/** The zone and label of a request, or the refusal the seed names. */
async function requested(db: Db, body: { parent_domain_id: string; subdomain: string }) {
  const zone = await store.findZone(db, body.parent_domain_id.toLowerCase());
  if (!zone) throw refused('zone_unavailable');
  const parsed = parseSubdomain(body.subdomain);
  if (!parsed.ok) throw refused('invalid_subdomain', parsed.reason);
  return { zone, subdomain: parsed.subdomain };
}

/** Inserts the row (published at once when the primary allocation exists, else queued); its view. */
async function take(
  tx: Db,
  ctx: RequestContext,
  access: ServiceAccessRow,
  zoneId: string,
  subdomain: string,
): Promise<GameSubdomainRow> {
  const records = await store.primaryAllocation(tx, access.service.id);
  const id = await store.insertSubdomain(
    tx,
    {
      serviceId: access.service.id,
      parentDomainId: zoneId,
      subdomain,
      hasSrv: access.product_kind === 'block_game',
      records,
    },
    ctx.clock.now(),
  );
  if (id === null) throw refused('subdomain_taken');
  if (!records) await enqueue(tx, 'publish_game_subdomain', { id }, { jobKey: jobKeyOf(id) });
  return (await store.findSubdomain(tx, access.service.id, id))!;
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  access: ServiceAccessRow,
  action: string,
  id: string,
) {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'game_subdomain', id },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const gameSubdomainHandlers: AreaHandlers<
  | 'gameSubdomainList'
  | 'gameSubdomainCreate'
  | 'gameSubdomainAvailability'
  | 'gameSubdomainRename'
  | 'gameSubdomainDelete'
> = {
  async gameSubdomainList({ path, auth, ctx }) {
    const { service } = await gameSubdomainService(ctx.sql, path.id, auth, 'services.read');
    const [zones, rows] = await Promise.all([
      store.listZones(ctx.sql),
      store.subdomainsOf(ctx.sql, service.id),
    ]);
    return { status: 200, body: { limit: LIMIT, zones: [...zones], subdomains: rows.map(toSubdomain) } };
  },

  async gameSubdomainAvailability({ path, query, auth, ctx }) {
    await gameSubdomainService(ctx.sql, path.id, auth, 'services.read');
    const zone = await store.findZone(ctx.sql, query.parent_domain_id.toLowerCase());
    if (!zone) return { status: 200, body: { status: 'zone_unavailable' as const, reason: null } };
    const parsed = parseSubdomain(query.subdomain);
    if (!parsed.ok) return { status: 200, body: { status: 'invalid' as const, reason: parsed.reason } };
    const taken = await store.isTaken(ctx.sql, zone.id, parsed.subdomain);
    return {
      status: 200,
      body: { status: taken ? ('taken' as const) : ('available' as const), reason: null },
    };
  },

  async gameSubdomainCreate({ path, body, auth, ctx }) {
    return idempotent(ctx, auth, 'gameSubdomainCreate', { path, body }, async (tx) => {
      // The service row's lock orders creations of one service: the limit cannot be passed in parallel.
      const access = await gameSubdomainService(tx, path.id, auth, 'services.manage', true);
      const { zone, subdomain } = await requested(tx, body);
      if ((await store.subdomainsOf(tx, access.service.id)).length >= LIMIT)
        throw refused('already_has_subdomain');
      const row = await take(tx, ctx, access, zone.id, subdomain);
      await audit(tx, ctx, auth, access, 'game_subdomain.created', row.id);
      return { status: 201 as const, body: toSubdomain(row) };
    });
  },

  async gameSubdomainRename({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await gameSubdomainService(tx, path.id, auth, 'services.manage', true);
      const old = await store.findSubdomain(tx, access.service.id, path.subdomain_id.toLowerCase(), true);
      if (!old) throw notFound('No such game subdomain.');
      const { zone, subdomain } = await requested(tx, body);
      if (zone.id === old.parent_domain_id && subdomain === old.subdomain) throw refused('subdomain_taken');
      // The old records leave with the row, in this transaction: a refusal below keeps both.
      await store.deleteSubdomain(tx, old.id);
      const row = await take(tx, ctx, access, zone.id, subdomain);
      await audit(tx, ctx, auth, access, 'game_subdomain.renamed', row.id);
      return { status: 200 as const, body: toSubdomain(row) };
    });
  },

  async gameSubdomainDelete({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await gameSubdomainService(tx, path.id, auth, 'services.manage', true);
      const row = await store.findSubdomain(tx, access.service.id, path.subdomain_id.toLowerCase(), true);
      if (!row) throw notFound('No such game subdomain.');
      await store.deleteSubdomain(tx, row.id);
      await audit(tx, ctx, auth, access, 'game_subdomain.deleted', row.id);
      return { status: 204 as const };
    });
  },
};
