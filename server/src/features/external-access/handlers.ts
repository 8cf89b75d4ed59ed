// External access (document 2 §2, §4 "External access"; DECISIONS.md §6 "Network"): public ports the
// edge forwards to the service's unit. The routes record desired state; the edge (server/src/edge/)
// applies it and reports what it applied, which the live route asks for.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Permission } from '../../authz/roles.js';
import { requireSystemPermission } from '../../authz/staff.js';
import type { Db } from '../../db/client.js';
import { invalidFieldValue, notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { requireService, requireServiceable, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { authorizeHttpName, parseHttpHostname } from '../domains/http-names.js';
import { askEdges } from './live.js';
import { BASE_PORT_SLOTS, slots, toAllocation, toHttpExposure, type IngressPorts } from './mappers.js';
import * as store from './store.js';

const allocationNotFound = () => notFound('No such allocation.');

/** The ports an HTTP domain's URL names: the first live ingress's, else the configured ones (0: unknown). */
async function ingressPorts(db: Db, config: RequestContext['config']): Promise<IngressPorts> {
  const [live] = await store.liveIngresses(db);
  if (live) return { http: live.http_port, https: live.https_port };
  const configured = (port: number | null) => (port === null || port === 0 ? null : port);
  return { http: configured(config.ingressHttpPort), https: configured(config.ingressHttpsPort) };
}

const ingressOff = (config: RequestContext['config']) =>
  config.ingressHttpPort === null && config.ingressHttpsPort === null;

const REFUSED: Record<'platform_zone' | 'not_verified' | 'taken', string> = {
  platform_zone: 'This name is in the platform’s own zone, or is not a single label under a parent domain.',
  not_verified:
    'This organization has not proven control of this domain (POST /organizations/{id}/domains/{domain}/check).',
  taken: 'Another service of this organization holds this name.',
};

/** The service, for a caller allowed `permission`, of a product with external access (else its 404). */
async function externalAccessService(
  db: Db,
  serviceId: string,
  auth: UserAuth,
  permission: Permission,
  lock = false,
): Promise<ServiceAccessRow> {
  const access = await requireService(db, { serviceId }, auth, permission, { lock });
  if (!(await store.productFeatures(db, access.service.product_id)).includes('external_access'))
    throw serviceNotFound();
  return access;
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  access: ServiceAccessRow,
  action: string,
  allocationId: string,
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'allocation', id: allocationId },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const externalAccessHandlers: AreaHandlers<
  | 'externalAccessGet'
  | 'externalAccessAllocationCreate'
  | 'externalAccessLiveGet'
  | 'externalAccessProtectionModesGet'
  | 'externalAccessAllocationDelete'
  | 'externalAccessAllocationHttpDomainSet'
  | 'externalAccessAllocationHttpDomainDelete'
  | 'externalAccessAllocationProtectionModeSet'
  | 'externalAccessDedicatedIpProtectionModeSet'
  | 'adminServiceExtraSlotsSet'
> = {
  async externalAccessGet({ path, auth, ctx }) {
    const { service } = await externalAccessService(ctx.sql, path.id, auth, 'services.read');
    const [allocations, usage, ingresses] = await Promise.all([
      store.listAllocations(ctx.sql, service.id),
      store.slotUsage(ctx.sql, service.id),
      store.liveIngresses(ctx.sql),
    ]);
    return {
      status: 200,
      body: {
        allocations: allocations.map(toAllocation),
        ...slots(usage),
        is_dedicated_ip: false,
        // What runs, unless this platform switched its ingress off (then an edge left running is not offered).
        http_ingress_ips: ingressOff(ctx.config) ? [] : [...new Set(ingresses.map((i) => i.address))],
      },
    };
  },

  async externalAccessAllocationCreate({ path, body, auth, ctx }) {
    const matchPort = body.match_port ?? false;
    return ctx.sql.begin(async (tx) => {
      // The service row's lock decides the quota and the duplicate rule: parallel requests queue here.
      const access = await externalAccessService(tx, path.id, auth, 'services.manage', true);
      // Only a caller who may change the service learns what is wrong with the body (seed 001 §5).
      if (!matchPort && body.internal_port === undefined) {
        throw invalidFieldValue('Name the internal port to forward to, or set match_port.', [
          { location: 'body', pointer: '/internal_port', message: 'required when match_port is false' },
        ]);
      }
      requireServiceable(access);
      const { service } = access;
      const usage = await store.slotUsage(tx, service.id);
      const limit = BASE_PORT_SLOTS + usage.extra_slots;
      if (usage.used >= limit) {
        throw unprocessable('port-quota-exhausted', `Every port slot is used (${limit}).`, { limit });
      }
      const internalPort = matchPort ? null : body.internal_port!;
      if (
        internalPort !== null &&
        (await store.hasAllocationFor(tx, service.id, internalPort, body.protocol))
      ) {
        throw unprocessable(
          'duplicate-allocation',
          `An allocation already forwards ${body.protocol} to internal port ${internalPort}.`,
        );
      }
      const unit = await store.findPrimaryUnit(tx, service.id);
      if (!unit) throw serviceNotFound();
      const made = await store.insertAllocation(
        tx,
        {
          serviceId: service.id,
          resourceId: unit.id,
          externalIp: ctx.config.host,
          pool: ctx.config.portPool,
          protocol: body.protocol,
          internalPort,
          isPrimary: false,
          isSystem: false,
        },
        ctx.clock.now(),
      );
      if (!made) throw unprocessable('no-free-port', 'No public port is free in the pool; try again later.');
      await audit(tx, ctx, auth, access, 'external_access.allocation_created', made.id);
      return { status: 201 as const, body: toAllocation(made) };
    });
  },

  async externalAccessLiveGet({ path, auth, ctx }) {
    const { service } = await externalAccessService(ctx.sql, path.id, auth, 'services.read');
    const [allocations, edges] = await Promise.all([
      store.listAllocations(ctx.sql, service.id),
      store.liveEdges(ctx.sql),
    ]);
    return { status: 200, body: await askEdges(edges, allocations) };
  },

  async externalAccessProtectionModesGet({ path, auth, ctx }) {
    await externalAccessService(ctx.sql, path.id, auth, 'services.read');
    return { status: 200, body: { default_mode: 'normal', game: ['normal'], vps: ['normal'] } };
  },

  async externalAccessAllocationDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const access = await externalAccessService(tx, path.id, auth, 'services.manage', true);
      const allocation = await store.findAllocation(tx, access.service.id, path.allocation_id);
      if (!allocation) throw allocationNotFound();
      if (allocation.is_system || allocation.is_primary) {
        throw unprocessable(
          'system-allocation',
          'This allocation is the platform’s own (the service’s primary or system port); it cannot be released.',
        );
      }
      // Its HTTP domain goes first, in this transaction: a failure there fails the release.
      if ((await store.releaseHttpDomain(tx, allocation.id)) !== null)
        await audit(tx, ctx, auth, access, 'external_access.http_domain_removed', allocation.id);
      await store.deleteAllocation(tx, access.service.id, allocation.id);
      await audit(tx, ctx, auth, access, 'external_access.allocation_released', allocation.id);
    });
    return { status: 204 };
  },

  async externalAccessAllocationHttpDomainSet({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      // The service row's lock: one change of this service's names at a time.
      const access = await externalAccessService(tx, path.id, auth, 'services.manage', true);
      const allocation = await store.findAllocation(tx, access.service.id, path.allocation_id);
      if (!allocation) throw allocationNotFound();
      const parsed = parseHttpHostname(body.domain);
      if (!parsed.ok) {
        throw invalidFieldValue(parsed.reason, [
          { location: 'body', pointer: '/domain', message: parsed.reason },
        ]);
      }
      requireServiceable(access);
      if (allocation.protocol !== 'tcp') {
        throw unprocessable('http-domain-needs-tcp', 'HTTP runs on TCP: this allocation forwards UDP.');
      }
      if (ingressOff(ctx.config)) {
        throw unprocessable(
          'no-http-ingress',
          'This platform runs no HTTP ingress (INGRESS_HTTP_PORT and INGRESS_HTTPS_PORT are off).',
        );
      }
      const current = await store.findHttpDomain(tx, allocation.id);
      const decide = async () => {
        const verdict = await authorizeHttpName(tx, {
          organizationId: access.organization_id,
          serviceId: access.service.id,
          hostname: parsed.hostname,
          platformDomain: ctx.config.platformDomain,
          parentDomains: await store.parentDomainNames(tx),
          now: ctx.clock.now(),
        });
        if (verdict.status === 'invalid') {
          throw invalidFieldValue(verdict.reason, [
            { location: 'body', pointer: '/domain', message: verdict.reason },
          ]);
        }
        if (verdict.status === 'attached') {
          // Held by this service already: this allocation's own name is answered as it is; a custom domain
          // or another allocation's name is in use.
          if (current && verdict.id === current.id) return current;
          throw unprocessable('http-name-refused', 'This service already uses this name elsewhere.', 'taken');
        }
        if (verdict.status !== 'available')
          throw unprocessable('http-name-refused', REFUSED[verdict.status], verdict.status);
        return null;
      };
      const same = await decide();
      if (same)
        return { status: 200 as const, body: toHttpExposure(same, await ingressPorts(tx, ctx.config)) };
      const now = ctx.clock.now();
      if (current) await store.releaseHttpDomain(tx, allocation.id);
      const claimed = await store.claimHttpDomain(
        tx,
        {
          serviceId: access.service.id,
          organizationId: access.organization_id,
          allocationId: allocation.id,
          hostname: parsed.hostname,
        },
        now,
      );
      if (!claimed) {
        // Lost a race for the name: its holder is committed now, and the verdict says who it is.
        await decide();
        throw unprocessable('http-name-refused', REFUSED.taken, 'taken');
      }
      await audit(tx, ctx, auth, access, 'external_access.http_domain_set', allocation.id);
      return { status: 200 as const, body: toHttpExposure(claimed, await ingressPorts(tx, ctx.config)) };
    });
  },

  async externalAccessAllocationHttpDomainDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const access = await externalAccessService(tx, path.id, auth, 'services.manage', true);
      const allocation = await store.findAllocation(tx, access.service.id, path.allocation_id);
      if (!allocation) throw allocationNotFound();
      if ((await store.releaseHttpDomain(tx, allocation.id)) !== null)
        await audit(tx, ctx, auth, access, 'external_access.http_domain_removed', allocation.id);
    });
    return { status: 204 };
  },

  async externalAccessAllocationProtectionModeSet({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await externalAccessService(tx, path.id, auth, 'services.manage', true);
      const allocation = await store.findAllocation(tx, access.service.id, path.allocation_id);
      if (!allocation) throw allocationNotFound();
      if (body.mode !== 'normal') {
        throw unprocessable(
          'protection-mode-unsupported',
          `Only the normal protection mode is offered, not ${body.mode}.`,
        );
      }
      // Setting the mode it has changes nothing, so nothing is audited.
      return { status: 200 as const, body: toAllocation(allocation) };
    });
  },

  async externalAccessDedicatedIpProtectionModeSet({ path, auth, ctx }) {
    await externalAccessService(ctx.sql, path.id, auth, 'services.manage');
    // No service here has an exclusive IP (the listing's is_dedicated_ip), and the seed's answer for
    // such a service is the 404 of an unknown id.
    throw notFound('This service has no dedicated IP.');
  },

  async adminServiceExtraSlotsSet({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
    return ctx.sql.begin(async (tx) => {
      const service = await store.lockServiceForStaff(tx, path.id);
      if (!service) throw notFound('No such service instance.');
      await store.setExtraSlots(tx, service.id, body.extra_slots, ctx.clock.now());
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: service.organization_id,
        action: 'service.extra_slots_set',
        target: { type: 'service_instance', id: service.id },
        projectId: service.project_id,
        serviceInstanceId: service.id,
      });
      const usage = await store.slotUsage(tx, service.id);
      return { status: 200 as const, body: { service_instance_id: service.id, ...slots(usage) } };
    });
  },
};
