// A running block game's world flushed before a backup archives its volume (DECISIONS.md §8 "The block
// game's world"): over the platform's RCON, `save-off` then `save-all flush`, so the archive holds the
// world as it was when the backup was asked for and no region file is written while it is read;
// `save-on` after. A game that is not running, or has no RCON, has nothing unsaved to flush.
import type { Db } from '../../db/client.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { RCON_PORT } from '../../workloads/block/version.js';
import { RconClient } from '../rcon/client.js';
import { gameService, rconUnit, sealedRconPassword } from '../store.js';
import { RCON_PROGRAMS } from '../unit-env.js';

/** Undoes the hold; never throws. */
export type Release = () => Promise<void>;

const nothing: Release = async () => undefined;

/**
 * Holds the world's writes of service `serviceId`'s game after flushing them, when it runs a game
 * whose RCON the platform speaks; answers how to let it write again.
 */
export async function flushWorld(deps: { sql: Db; box: SecretBox }, serviceId: string): Promise<Release> {
  const game = await gameService(deps.sql, serviceId);
  if (!game?.workload_program || !RCON_PROGRAMS.has(game.workload_program)) return nothing;
  const unit = await rconUnit(deps.sql, serviceId);
  const sealed = await sealedRconPassword(deps.sql, serviceId);
  if (!unit?.address || unit.unit_status !== 'running' || !sealed) return nothing;
  const rcon = new RconClient({
    host: unit.address,
    port: RCON_PORT,
    password: await deps.box.openText('rcon-password', sealed),
    connectTimeoutMs: 3000,
    // A large world takes a while to write.
    commandTimeoutMs: 60_000,
  });
  try {
    await rcon.command('save-off');
    await rcon.command('save-all flush');
  } catch {
    // A server that does not answer (still starting, or stopped behind the platform's back) has
    // saved what it last could; the archive holds that, as it would of a stopped one.
    rcon.close();
    return nothing;
  }
  return async () => {
    await rcon.command('save-on').catch(() => undefined);
    rcon.close();
  };
}
