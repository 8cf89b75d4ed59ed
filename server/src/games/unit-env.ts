// What a game's workload is told besides where to listen: the service's name (the arena game's
// sv_hostname, the block game's MOTD) and its RCON password, unsealed only here, on its way to the
// workload's environment (the local substrate keeps it in a 0600 file of the unit).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { UnitSpec } from '../substrate/driver.js';
import { RCON_PORT } from '../workloads/block/version.js';
import { ensureRconPassword, gameService } from './store.js';

export const GAME_ENV = { name: 'SVC_SERVICE_NAME', rconPassword: 'SVC_RCON_PASSWORD' } as const;

const GAME_KINDS = new Set(['block_game', 'arena_game']);
/** The workload programs whose RCON the API speaks (the roster and actions). */
export const RCON_PROGRAMS = new Set(['block-game']);

/** The service's RCON password in the clear, made (and sealed) on first use. */
export async function rconPassword(
  deps: { sql: Db; box: SecretBox; clock: Clock },
  serviceId: string,
): Promise<string> {
  // base64url: no character a game's console or config would read specially.
  const candidate = await deps.box.seal('rcon-password', randomBytes(18).toString('base64url'));
  const sealed = await ensureRconPassword(deps.sql, serviceId, candidate, deps.clock.now());
  return deps.box.openText('rcon-password', sealed);
}

/** `spec` with the game's environment added when the service is a game (else as it is). */
export async function withGameEnv(
  deps: { sql: Db; box: SecretBox; clock: Clock },
  serviceId: string,
  spec: UnitSpec,
): Promise<UnitSpec> {
  if (spec.kind !== 'workload') return spec;
  const service = await gameService(deps.sql, serviceId);
  if (!service || !GAME_KINDS.has(service.product_kind)) return spec;
  return {
    ...spec,
    env: {
      ...spec.env,
      [GAME_ENV.name]: service.name,
      [GAME_ENV.rconPassword]: await rconPassword(deps, serviceId),
    },
    // The API's roster and actions reach the game's RCON at the unit's address.
    ...(service.workload_program && RCON_PROGRAMS.has(service.workload_program)
      ? { privatePorts: [...(spec.privatePorts ?? []), { protocol: 'tcp' as const, port: RCON_PORT }] }
      : {}),
  };
}
