// Tickets to consoles, shells and screens (document 2 §4 "Consoles and tickets"; DECISIONS.md §6 "The
// edge gateway"). Gated as changing the service; every refusal of access is the 404 of an unknown id.
import type { AreaHandlers } from '../../http/handler.js';
import { requireService } from '../services/access.js';
import { ticketTarget } from './target.js';
import { mintTicket } from './tickets.js';

export const consoleHandlers: AreaHandlers<'consoleTicketCreate'> = {
  async consoleTicketCreate({ path, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage');
      const resource = await ticketTarget(tx, access, path.resource_id, {
        feature: 'console',
        kind: 'workload',
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
};
