// Game servers as their players see them (document 2 §2 "Game roster", "Game live info", §4 "Game
// servers"; DECISIONS.md §6 "Games"): the arena game's live info over the Quake 3 protocol on the
// primary allocation, the block game's roster and player actions over RCON on the unit's own address.
// Every degraded case is a 200 with its status, never a 5xx.
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { actorOf, recordAudit } from '../../audit/record.js';
import { LiveInfoCache } from '../../games/arena/query.js';
import { AUDIT_ACTION, auditTarget, commandOf, outcomeOf } from '../../games/block/actions.js';
import { emptyRoster, gatherRoster, rosterFailure, type Include } from '../../games/block/roster.js';
import { RconError, type RconClient } from '../../games/rcon/client.js';
import { RconPool } from '../../games/rcon/pool.js';
import { gameService, primaryTarget, rconUnit, sealedRconPassword } from '../../games/store.js';
import { RCON_PROGRAMS } from '../../games/unit-env.js';
import { RCON_PORT } from '../../workloads/block/version.js';
import { productFeatures } from '../external-access/store.js';
import { requireService, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';

// The programs that answer Quake 3 queries, and Minecraft's RCON; another workload has nothing to ask.
const QUAKE_PROGRAMS = new Set(['arena-game']);

// Per process: the answers kept briefly and the one query in flight per server (see the spec), and
// one RCON connection per server.
const liveInfo = new LiveInfoCache();
const rconPool = new RconPool({ connectTimeoutMs: 3000, commandTimeoutMs: 5000 });

type Reached =
  | { ok: true; rcon: RconClient; unitId: string; volumeId: string | null }
  | { ok: false; status: 'not_configured' | 'server_offline' };

/**
 * The service's RCON, once its access and product are checked: the 404 of an unknown id without a
 * console (seed §4), a status when there is nothing to ask.
 */
async function reachRcon(ctx: RequestContext, access: ServiceAccessRow): Promise<Reached> {
  const { service } = access;
  const features = await productFeatures(ctx.sql, service.product_id);
  if (!features.includes('console')) throw serviceNotFound();
  const game = await gameService(ctx.sql, service.id);
  if (!features.includes('roster') || !game?.workload_program || !RCON_PROGRAMS.has(game.workload_program)) {
    return { ok: false, status: 'not_configured' };
  }
  const unit = await rconUnit(ctx.sql, service.id);
  if (!unit?.address || service.status !== 'running' || unit.unit_status !== 'running') {
    return { ok: false, status: 'server_offline' };
  }
  // Read, never made here: a password is made when the unit is given its environment, so a service
  // without one runs no RCON (and a roster request never writes).
  const sealed = await sealedRconPassword(ctx.sql, service.id);
  if (!sealed) return { ok: false, status: 'not_configured' };
  const password = await ctx.box.openText('rcon-password', sealed);
  const rcon = rconPool.client(service.id, { host: unit.address, port: RCON_PORT, password });
  return { ok: true, rcon, unitId: unit.unit_id, volumeId: unit.volume_id };
}

/**
 * A refused connection while the platform believes the unit runs: the substrate says whether the unit
 * is down behind its back (server_offline) or runs without RCON answering (unreachable).
 */
async function failureStatus<T extends string>(
  ctx: RequestContext,
  unitId: string,
  status: T,
): Promise<T | 'server_offline'> {
  if (status !== 'unreachable' || !ctx.substrate) return status;
  const state = await ctx.substrate.unitState(unitId).catch(() => null);
  return state && state !== 'running' ? 'server_offline' : status;
}

export const gameHandlers: AreaHandlers<'gameLiveInfoGet' | 'gameRosterGet' | 'gameActionRun'> = {
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

  async gameRosterGet({ path, query, auth, ctx }) {
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    const reached = await reachRcon(ctx, access);
    if (!reached.ok) return { status: 200, body: emptyRoster(reached.status) };
    const include = (query.include ?? []) as Include[];
    const files = reached.volumeId ? (ctx.substrate?.volumeFiles(reached.volumeId) ?? null) : null;
    try {
      return { status: 200, body: await gatherRoster(reached.rcon, files, include) };
    } catch (err) {
      const status = await failureStatus(ctx, reached.unitId, rosterFailure(err));
      return { status: 200, body: emptyRoster(status) };
    }
  },

  async gameActionRun({ path, body, auth, ctx }) {
    // Seed §4: gated like attaching a console, but Owner or Admin only (DECISIONS.md §6 "Access").
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.game_actions');
    const reached = await reachRcon(ctx, access);
    if (!reached.ok) return { status: 200, body: { status: reached.status } };
    let reply: string;
    try {
      reply = await reached.rcon.command(commandOf(body));
    } catch (err) {
      if (!(err instanceof RconError)) throw err;
      return { status: 200, body: { status: await failureStatus(ctx, reached.unitId, err.status) } };
    }
    const status = outcomeOf(body.kind, reply);
    if (status === 'ok') {
      await recordAudit(ctx.sql, ctx, actorOf(auth), {
        organizationId: access.organization_id,
        action: AUDIT_ACTION[body.kind],
        target: auditTarget(body, access.service.id),
        projectId: access.service.project_id,
        serviceInstanceId: access.service.id,
      });
    }
    return { status: 200, body: { status } };
  },
};
