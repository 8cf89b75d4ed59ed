// Custom domains (document 2 §2 "Custom domains listing", §3, §4 "Custom domains"; DECISIONS.md §6
// "DNS and domains"): a web service's own host names. The row in `http_names` is the claim; the job
// queue obtains its certificate (issuance.ts) and the edge's HTTP ingress serves it by SNI.
import { actorOf, recordAudit } from '../../audit/record.js';
import { issueJobKey } from '../../certificates/tasks.js';
import type { Permission } from '../../authz/roles.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { webPlatformHost } from '../../dns/platform-names.js';
import { invalidFieldValue, notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { enqueue } from '../../jobs/queue.js';
import { authorizeHttpName, type HttpNameVerdict } from '../domains/http-names.js';
import { listParentDomains } from '../parent-domains/store.js';
import { requireService, serviceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import * as store from './store.js';
import type { CustomDomainRow } from './store.js';

/** Custom domains per service (DECISIONS.md §6 "Products, features and limits"). */
export const CUSTOM_DOMAIN_LIMIT = 10;

const toCustomDomain = (r: CustomDomainRow) => ({
  id: r.id,
  hostname: r.hostname,
  status: r.status,
  status_reason: r.status === 'active' ? null : r.status_reason,
  url: `https://${r.hostname}`,
  certificate_expires_at: r.certificate_expires_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

/**
 * Whether the platform can serve a custom domain: a custom domain is served over HTTPS and its ACME
 * challenge over HTTP, so both INGRESS_HTTP_PORT and INGRESS_HTTPS_PORT must be on.
 */
export const hasHttpIngress = (config: Config): boolean =>
  config.ingressHttpPort !== null && config.ingressHttpsPort !== null;

/** The service, for a caller allowed `permission`, of a product with custom domains (else its 404). */
async function customDomainService(
  db: Db,
  serviceId: string,
  auth: UserAuth,
  permission: Permission,
  lock = false,
): Promise<ServiceAccessRow> {
  const access = await requireService(db, { serviceId }, auth, permission, { lock });
  const [product] = await db<{ features: string[] }[]>`
    select features from catalog_products where id = ${access.service.product_id}`;
  if (!product?.features.includes('custom_domains')) throw serviceNotFound();
  return access;
}

async function verdictOf(db: Db, ctx: RequestContext, access: ServiceAccessRow, hostname: string) {
  const parents = await listParentDomains(db);
  return authorizeHttpName(db, {
    organizationId: access.organization_id,
    serviceId: access.service.id,
    hostname,
    platformDomain: ctx.config.platformDomain,
    parentDomains: parents.map((p) => p.name),
    now: ctx.clock.now(),
  });
}

/**
 * The refusal for a verdict that does not let the name be attached here, or null: the code and details
 * HTTP domains answer (422 `http-name-refused` with `platform_zone`, `not_verified` or `taken`).
 */
function refusalOf(verdict: HttpNameVerdict): Error | null {
  switch (verdict.status) {
    case 'invalid':
      return invalidFieldValue(verdict.reason, [
        { location: 'body', pointer: '/hostname', message: verdict.reason },
      ]);
    case 'platform_zone':
      return unprocessable(
        'http-name-refused',
        `${verdict.hostname} is in a zone the platform serves; it cannot be attached.`,
        'platform_zone',
      );
    case 'not_verified':
      return unprocessable(
        'http-name-refused',
        `Prove control of ${verdict.hostname} (or a name above it) with a domain claim of this organization first.`,
        'not_verified',
      );
    case 'taken':
      return unprocessable(
        'http-name-refused',
        `${verdict.hostname} is held by another service of this organization.`,
        'taken',
      );
    case 'attached':
      return verdict.kind === 'custom_domain'
        ? null
        : unprocessable(
            'http-name-refused',
            `${verdict.hostname} is this service's HTTP domain already.`,
            'taken',
          );
    case 'available':
      return null;
  }
}

export const customDomainHandlers: AreaHandlers<
  'customDomainList' | 'customDomainAttach' | 'customDomainAvailability' | 'customDomainDetach'
> = {
  async customDomainList({ path, auth, ctx }) {
    const { service } = await customDomainService(ctx.sql, path.id, auth, 'services.read');
    const rows = await store.customDomainsOf(ctx.sql, service.id);
    const host = hasHttpIngress(ctx.config)
      ? webPlatformHost(service.slug, service.id, ctx.config.platformDomain)
      : null;
    return {
      status: 200,
      body: {
        platform_host: host,
        platform_url: host === null ? null : `https://${host}`,
        limit: CUSTOM_DOMAIN_LIMIT,
        domains: rows.map(toCustomDomain),
      },
    };
  },

  async customDomainAvailability({ path, query, auth, ctx }) {
    const access = await customDomainService(ctx.sql, path.id, auth, 'services.manage');
    const verdict = await verdictOf(ctx.sql, ctx, access, query.hostname);
    if (verdict.status === 'invalid')
      return { status: 200, body: { status: 'invalid' as const, reason: verdict.reason } };
    const status = verdict.status === 'attached' ? ('taken' as const) : verdict.status;
    return { status: 200, body: { status, reason: null } };
  },

  async customDomainAttach({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      // The service row's lock orders attaches of one service: the limit cannot be passed in parallel.
      const access = await customDomainService(tx, path.id, auth, 'services.manage', true);
      if (!serviceable(access)) {
        throw unprocessable(
          'subscription-not-serviceable',
          `The service cannot be changed now: its subscription is ${access.subscription_status} and the service ${access.service.status}.`,
        );
      }
      if (!hasHttpIngress(ctx.config)) {
        throw unprocessable(
          'no-http-ingress',
          'The platform has no HTTP ingress to serve a custom domain on.',
        );
      }
      const verdict = await verdictOf(tx, ctx, access, body.hostname);
      if (verdict.status === 'attached' && verdict.kind === 'custom_domain') {
        return {
          status: 200 as const,
          body: toCustomDomain((await store.findCustomDomain(tx, access.service.id, verdict.id))!),
        };
      }
      if (verdict.status !== 'available') throw refusalOf(verdict)!;
      if ((await store.countCustomDomains(tx, access.service.id)) >= CUSTOM_DOMAIN_LIMIT) {
        throw unprocessable(
          'custom-domain-limit-reached',
          `A service holds at most ${CUSTOM_DOMAIN_LIMIT} custom domains; detach one first.`,
          { limit: CUSTOM_DOMAIN_LIMIT },
        );
      }
      const now = ctx.clock.now();
      const id = await store.insertCustomDomain(
        tx,
        { serviceId: access.service.id, organizationId: access.organization_id, hostname: verdict.hostname },
        now,
      );
      if (id === null) {
        // Another request took the name between the look and the insert: answer as the look now would.
        throw (
          refusalOf(await verdictOf(tx, ctx, access, body.hostname)) ??
          unprocessable('http-name-refused', 'The name was taken meanwhile.', 'taken')
        );
      }
      await enqueue(tx, 'issue_certificate', { id }, { jobKey: issueJobKey(id) });
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: access.organization_id,
        action: 'custom_domain.attached',
        target: { type: 'custom_domain', id },
        projectId: access.service.project_id,
        serviceInstanceId: access.service.id,
      });
      return {
        status: 200 as const,
        body: toCustomDomain((await store.findCustomDomain(tx, access.service.id, id))!),
      };
    });
  },

  async customDomainDetach({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await customDomainService(tx, path.id, auth, 'services.manage', true);
      const id = path.route_id.toLowerCase();
      if ((await store.deleteCustomDomain(tx, access.service.id, id)) === null)
        throw notFound('No such custom domain.');
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: access.organization_id,
        action: 'custom_domain.detached',
        target: { type: 'custom_domain', id },
        projectId: access.service.project_id,
        serviceInstanceId: access.service.id,
      });
      return { status: 204 as const };
    });
  },
};
