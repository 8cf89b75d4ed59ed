// Game servers as their players see them (document 2 §2 "Game live info", §4 "Game servers";
// DECISIONS.md §6 "Games"): the arena game's live info, asked over the Quake 3 protocol on the
// service's primary allocation. Every degraded case is a 200 with its status, never a 5xx.
import type { AreaHandlers } from '../../http/handler.js';
import { LiveInfoCache } from '../../games/arena/query.js';
import { gameService, primaryTarget } from '../../games/store.js';
import { productFeatures } from '../external-access/store.js';
import { requireService, serviceNotFound } from '../services/access.js';

// The program that answers Quake 3 queries; another product's workload has nothing to ask.
const QUAKE_PROGRAMS = new Set(['arena-game']);

// Per process: the answers kept briefly and the one query in flight per server (see the spec).
const liveInfo = new LiveInfoCache();

export const gameHandlers: AreaHandlers<'gameLiveInfoGet'> = {
  async gameLiveInfoGet({ path, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    const features = await productFeatures(ctx.sql, service.product_id);
    // Seed 001 §4: 404 only without external access; a product reached from outside that runs no
    // Quake 3 server (a VPS, the block game) has nothing to ask.
    if (!features.includes('external_access')) throw serviceNotFound();
    const game = await gameService(ctx.sql, service.id);
    if (
      !features.includes('live_info') ||
      !game?.workload_program ||
      !QUAKE_PROGRAMS.has(game.workload_program)
    ) {
      return { status: 200, body: { status: 'not_configured' } };
    }
    const target = await primaryTarget(ctx.sql, service.id);
    if (!target || target.protocol !== 'udp') return { status: 200, body: { status: 'no_address' } };
    if (service.status !== 'running' || target.unit_status !== 'running') {
      return { status: 200, body: { status: 'offline' } };
    }
    return { status: 200, body: await liveInfo.query(target.external_ip, target.external_port) };
  },
};
