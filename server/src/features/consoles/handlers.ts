// Tickets to consoles, shells and screens (document 2 §4 "Consoles and tickets"; DECISIONS.md §6 "The
// edge gateway"). Gated as changing the service; every refusal of access is the 404 of an unknown id.
import type { AreaHandlers } from '../../http/handler.js';
import { requireService, serviceNotFound } from '../services/access.js';
import { substrateContainers, substrateShells } from '../../substrate/capabilities.js';
import { ticketTarget } from './target.js';
import { mintTicket } from './tickets.js';

export const consoleHandlers: AreaHandlers<'consoleTicketCreate' | 'shellTicketCreate'> = {
  async consoleTicketCreate({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await ticketTarget(tx, access, path.resource_id, {
        feature: 'console',
        kinds: ['workload'],
        substrate: ctx.config.substrate,
      });
      const ticket = await mintTicket(tx, ctx, auth, {
        purpose: 'console',
        access,
        resourceId: resource.id,
        action: 'console.ticket_issued',
      });
      return { status: 200 as const, body: { expires_at: ticket.expiresAt.toISOString(), url: ticket.url } };
    });
  },

  async shellTicketCreate({ path, query, auth, ctx }) {
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
      const ticket = await mintTicket(tx, ctx, auth, {
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
};
