// Tickets to consoles, shells and screens (document 2 §4 "Consoles and tickets"; DECISIONS.md §6 "The
// edge gateway"). Gated as changing the service; every refusal of access is the 404 of an unknown id.
import type { AreaHandlers } from '../../http/handler.js';
import { requireService, serviceNotFound } from '../services/access.js';
import { substrateContainers, substrateShells } from '../../substrate/capabilities.js';
import { ApiError } from '../../http/errors.js';
import { holdExpiry, newScreenSession, SCREEN_PROTOCOLS, screenSessionDigest } from './screen.js';
import { refreshScreenHold, releaseScreenHold, screenHolderName, takeScreenHold } from './store.js';
import { featureTarget, ticketTarget } from './target.js';
import { mintTicket, ticketSigningKey } from './tickets.js';

const SCREEN = { feature: 'screen' as const, kinds: ['virtual_machine' as const] };

export const consoleHandlers: AreaHandlers<
  'consoleTicketCreate' | 'shellTicketCreate' | 'screenTicketCreate' | 'screenHoldRefresh' | 'screenHoldRelease'
> = {
  async consoleTicketCreate({ path, auth, ctx }) {
    const key = await ticketSigningKey(ctx);
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await ticketTarget(tx, access, path.resource_id, {
        feature: 'console',
        kinds: ['workload'],
        substrate: ctx.config.substrate,
      });
      const ticket = await mintTicket(tx, ctx, auth, key, {
        purpose: 'console',
        access,
        resourceId: resource.id,
        action: 'console.ticket_issued',
      });
      return { status: 200 as const, body: { expires_at: ticket.expiresAt.toISOString(), url: ticket.url } };
    });
  },

  async shellTicketCreate({ path, query, auth, ctx }) {
    const key = await ticketSigningKey(ctx);
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await ticketTarget(tx, access, path.resource_id, {
        feature: 'shell',
        kinds: ['workload', 'virtual_machine'],
        substrate: ctx.config.substrate,
      });
      // Seed §4: the container defaults to the workload's configured one, else its primary; it must be
      // one the unit runs. No shell in the image (no bubblewrap on this host) is the same 404.
      const containers = substrateContainers(ctx.config.substrate);
      const container = query.container ?? containers[0];
      const shells = substrateShells(ctx.config.substrate);
      if (!container || !containers.includes(container) || shells.length === 0) throw serviceNotFound();
      const ticket = await mintTicket(tx, ctx, auth, key, {
        purpose: 'shell',
        access,
        resourceId: resource.id,
        details: { container, shells },
        action: 'shell.ticket_issued',
      });
      return {
        status: 200 as const,
        body: { container, expires_at: ticket.expiresAt.toISOString(), shells, url: ticket.url },
      };
    });
  },

  async screenTicketCreate({ path, query, auth, ctx }) {
    const key = await ticketSigningKey(ctx);
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await ticketTarget(tx, access, path.resource_id, {
        ...SCREEN,
        substrate: ctx.config.substrate,
      });
      const now = ctx.clock.now();
      const session = newScreenSession();
      const holdExpiresAt = holdExpiry(now);
      const taken = await takeScreenHold(tx, {
        resourceId: resource.id,
        sessionDigest: session.digest,
        userId: auth.userId,
        now,
        expiresAt: holdExpiresAt,
        force: query.force === true,
      });
      if (!taken) {
        const holder = (await screenHolderName(tx, resource.id, { now })) ?? 'another user';
        throw new ApiError(
          409,
          'screen-held',
          `The screen is held by ${holder}; ask again with force=true to take it over.`,
          { details: { holder_name: holder } },
        );
      }
      const ticket = await mintTicket(tx, ctx, auth, key, {
        purpose: 'screen',
        access,
        resourceId: resource.id,
        details: { session_digest: session.digest },
        action: 'screen.ticket_issued',
      });
      return {
        status: 200 as const,
        body: {
          expires_at: ticket.expiresAt.toISOString(),
          hold_expires_at: holdExpiresAt.toISOString(),
          protocols: SCREEN_PROTOCOLS,
          session_id: session.id,
          url: ticket.url,
        },
      };
    });
  },

  async screenHoldRefresh({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await featureTarget(tx, access, path.resource_id, {
        ...SCREEN,
        substrate: ctx.config.substrate,
      });
      const now = ctx.clock.now();
      const sessionDigest = screenSessionDigest(body.session_id);
      const expiresAt = await refreshScreenHold(tx, {
        resourceId: resource.id,
        sessionDigest,
        userId: auth.userId,
        expiresAt: holdExpiry(now),
      });
      if (expiresAt) return { status: 200 as const, body: { held: true, expires_at: expiresAt.toISOString() } };
      const holder = await screenHolderName(tx, resource.id, {
        now,
        except: { sessionDigest, userId: auth.userId },
        lapsed: true,
      });
      return { status: 200 as const, body: holder === null ? { held: false } : { held: false, holder_name: holder } };
    });
  },

  async screenHoldRelease({ path, query, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await featureTarget(tx, access, path.resource_id, {
        ...SCREEN,
        substrate: ctx.config.substrate,
      });
      const released = await releaseScreenHold(tx, {
        resourceId: resource.id,
        sessionDigest: screenSessionDigest(query.session_id),
        userId: auth.userId,
        now: ctx.clock.now(),
      });
      return { status: 200 as const, body: { released } };
    });
  },
};
