// Domain Connect links (document 2 §2 "Domain connect link", §3, §4 "Domain connect", §8; DECISIONS.md
// §6 "DNS and domains"): the block game's customers publish `SRV _minecraft._tcp.<host>.<domain>` →
// the service's platform name and primary port through their DNS provider's synchronous Domain Connect
// flow. The platform discovers the provider, hands out the (signed) apply URL, and reads the record back
// on verify; it never writes the customer's DNS and cleans nothing there on release.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Permission } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { gamePlatformName } from '../../dns/platform-names.js';
import { lookupSrv } from '../../dns/resolver.js';
import { capabilityNotAvailable, invalidFieldValue, notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { claimsKeyItself, idempotent, storedAnswer } from '../../operations/idempotency.js';
import { requireService, requireServiceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { applyUrl } from './apply-url.js';
import { discover, templateConfirmed, type DiscoveryRefusal } from './discovery.js';
import { overlaps, parseLinkNames, srvNameOf } from './names.js';
import * as store from './store.js';
import type { LinkRow } from './store.js';

/** Domain connect links per service (document 2 §8). */
export const LINK_LIMIT = 20;

const hostnameOf = (r: Pick<LinkRow, 'domain' | 'host'>) =>
  r.host === '' ? r.domain : `${r.host}.${r.domain}`;

const toLink = (r: LinkRow) => ({
  id: r.id,
  domain: r.domain,
  host: r.host,
  hostname: hostnameOf(r),
  status: r.status,
  created_at: r.created_at.toISOString(),
  apply_url: r.apply_url,
  dns_provider_display_name: r.dns_provider_display_name,
  last_error: r.last_error,
  last_verified_at: r.last_verified_at?.toISOString() ?? null,
  template_confirmed: r.template_confirmed,
  srv_target: r.srv_target,
  srv_port: r.srv_port,
});

type Refusal = DiscoveryRefusal | 'platform_domain' | 'already_linked' | 'no_primary_allocation';
const refused = (reason: Refusal, detail: string) => unprocessable('domain-connect-refused', detail, reason);

/**
 * The service, for a caller allowed `permission`, of a product offering Domain Connect, on a deployment
 * that has the capability (501 before anything else: it says nothing about the service).
 */
async function connectService(
  ctx: RequestContext,
  db: Db,
  serviceId: string,
  auth: UserAuth,
  permission: Permission,
  lock = false,
): Promise<ServiceAccessRow> {
  if (!ctx.config.capabilities.domain_connect) throw capabilityNotAvailable('domain_connect');
  const access = await requireService(db, { serviceId }, auth, permission, { lock });
  if (!(await store.productFeatures(db, access.service.product_id)).includes('domain_connect'))
    throw serviceNotFound();
  return access;
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
    target: { type: 'domain_connect_link', id },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const domainConnectHandlers: AreaHandlers<
  'domainConnectList' | 'domainConnectLink' | 'domainConnectRelease' | 'domainConnectVerify'
> = {
  async domainConnectList({ path, auth, ctx }) {
    const { service } = await connectService(ctx, ctx.sql, path.id, auth, 'services.read');
    const links = await store.linksOf(ctx.sql, service.id);
    return {
      status: 200,
      body: { supported: ctx.config.domainConnect.template !== null, links: links.map(toLink) },
    };
  },

  // The provider's discovery (DNS, then its settings over HTTP) runs before any transaction: a slow or
  // silent provider holds no connection and no lock. So this handler claims its key itself, after it.
  domainConnectLink: claimsKeyItself(async ({ path, body, auth, ctx }) => {
    const names = parseLinkNames(body.domain, body.host ?? '');
    const request = { path, body };
    const stored = await storedAnswer(ctx, auth, 'domainConnectLink', request);
    if (stored) return stored as { status: 201; body: ReturnType<typeof toLink> };
    const { config } = ctx;
    const first = await connectService(ctx, ctx.sql, path.id, auth, 'services.manage');
    if (!names.ok)
      throw invalidFieldValue(names.reason, [
        { location: 'body', pointer: names.pointer, message: names.reason },
      ]);
    requireServiceable(first);
    const zones = [config.platformDomain, ...(await store.parentDomains(ctx.sql))];
    const zone = zones.find((z) => overlaps(names.domain, z));
    if (zone !== undefined)
      throw refused(
        'platform_domain',
        `${names.domain} belongs to the platform (${zone}); link a domain of your own.`,
      );
    const serviceId = first.service.id;
    // Cheap refusals before any lookup; all are decided again under the service's lock below.
    await refuseLink(ctx.sql, serviceId, names);
    const found = await discover(names.domain, config);
    if (!found.ok) throw refused(found.reason, found.detail);
    const { template, signingKey, signingKeyId } = config.domainConnect;
    const confirmed = await templateConfirmed(found.settings, template, config);

    return idempotent(ctx, auth, 'domainConnectLink', request, async (tx) => {
      // The service row's lock orders links of one service: 20 cannot be passed in parallel.
      const access = await connectService(ctx, tx, path.id, auth, 'services.manage', true);
      requireServiceable(access);
      const srv = await refuseLink(tx, serviceId, names);
      const srvTarget = gamePlatformName(srv.slug, serviceId, config.platformDomain);
      const url = template
        ? applyUrl(
            found.settings.urlSyncUX,
            template,
            { domain: names.domain, host: names.host, target: srvTarget, port: srv.port },
            signingKey ? { key: signingKey, keyId: signingKeyId } : null,
          )
        : null;
      const row = await store.insertLink(
        tx,
        {
          serviceId,
          domain: names.domain,
          host: names.host,
          srvTarget,
          srvPort: srv.port,
          applyUrl: url,
          providerId: found.settings.providerId,
          providerDisplayName: found.settings.displayName,
          templateConfirmed: confirmed,
        },
        ctx.clock.now(),
      );
      if (!row) throw refused('already_linked', `${names.hostname} is linked to this service already.`);
      await audit(tx, ctx, auth, access, 'domain_connect.linked', row.id);
      return { status: 201 as const, body: toLink(row) };
    });
  }),

  async domainConnectRelease({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await connectService(ctx, tx, path.id, auth, 'services.manage', true);
      const row = await store.findLink(tx, access.service.id, path.link_id.toLowerCase(), true);
      if (!row) throw notFound('No such domain connect link.');
      await store.deleteLink(tx, row.id);
      await audit(tx, ctx, auth, access, 'domain_connect.released', row.id);
      return { status: 204 as const };
    });
  },

  async domainConnectVerify({ path, auth, ctx }) {
    const { service } = await connectService(ctx, ctx.sql, path.id, auth, 'services.manage');
    const linkId = path.link_id.toLowerCase();
    const link = await store.findLink(ctx.sql, service.id, linkId);
    if (!link) throw notFound('No such domain connect link.');
    // The lookup runs outside any transaction: nothing is held while the DNS answers.
    const name = srvNameOf(hostnameOf(link));
    const answer = await lookupSrv(name, {
      servers: ctx.config.dnsServers,
      timeoutMs: ctx.config.dnsTimeoutMs,
    });
    const outcome = !answer.ok
      ? {
          status: link.status,
          lastError: `The SRV lookup of ${name} failed (${answer.failure}); try again.`,
          verifiedAt: null,
        }
      : answer.records.length === 0
        ? { status: 'pending' as const, lastError: null, verifiedAt: ctx.clock.now() }
        : answer.records.some((r) => r.target === link.srv_target && r.port === link.srv_port)
          ? { status: 'active' as const, lastError: null, verifiedAt: ctx.clock.now() }
          : {
              status: 'failed' as const,
              lastError: `${name} points at ${answer.records.map((r) => `${r.target}:${r.port}`).join(', ')}, not ${link.srv_target}:${link.srv_port}.`,
              verifiedAt: ctx.clock.now(),
            };
    return ctx.sql.begin(async (tx) => {
      const access = await connectService(ctx, tx, path.id, auth, 'services.manage');
      // Released meanwhile: gone, like any unknown id.
      if (!(await store.findLink(tx, access.service.id, linkId, true)))
        throw notFound('No such domain connect link.');
      const row = await store.recordVerify(tx, linkId, outcome);
      await audit(tx, ctx, auth, access, 'domain_connect.verified', row.id);
      return { status: 200 as const, body: toLink(row) };
    });
  },
};

/** The link's refusals that depend on the service's links and allocation; answers its SRV target's parts. */
async function refuseLink(
  db: Db,
  serviceId: string,
  names: { domain: string; host: string; hostname: string },
): Promise<{ slug: string; port: number }> {
  if (await store.isLinked(db, serviceId, names.domain, names.host))
    throw refused('already_linked', `${names.hostname} is linked to this service already.`);
  if ((await store.countLinks(db, serviceId)) >= LINK_LIMIT) throw limitReached();
  const srv = await store.srvOf(db, serviceId);
  if (srv.port === null)
    throw refused(
      'no_primary_allocation',
      'The service has no primary allocation for the SRV record to point at yet.',
    );
  return { slug: srv.slug, port: srv.port };
}

const limitReached = () =>
  unprocessable(
    'domain-connect-limit-reached',
    `A service holds at most ${LINK_LIMIT} domain connect links; release one first.`,
    { limit: LINK_LIMIT },
  );
