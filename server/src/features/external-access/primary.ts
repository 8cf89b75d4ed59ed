// The allocation the platform makes with a service (DECISIONS.md §6 "Network"): a game's primary
// allocation on its game port, a VPS's system allocation on its machine's SSH port. Web apps are reached
// through the HTTP ingress and get none.
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import { insertAllocation } from './store.js';

type ProductKind = 'vps' | 'block_game' | 'arena_game' | 'web_app';

export const PRIMARY_PORTS: Partial<
  Record<ProductKind, { internalPort: number; protocol: 'tcp' | 'udp'; system: boolean }>
> = {
  vps: { internalPort: 22, protocol: 'tcp', system: true },
  // Minecraft Java Edition's port; its RCON port is never forwarded.
  block_game: { internalPort: 25565, protocol: 'tcp', system: false },
  // ioquake3's port (getstatus/getinfo and play are UDP).
  arena_game: { internalPort: 27960, protocol: 'udp', system: false },
};

export async function allocatePrimary(
  tx: Db,
  config: Pick<Config, 'host' | 'portPool'>,
  input: { serviceId: string; unitId: string; productKind: string },
  now: Date,
): Promise<void> {
  const port = PRIMARY_PORTS[input.productKind as ProductKind];
  if (!port) return;
  const made = await insertAllocation(
    tx,
    {
      serviceId: input.serviceId,
      resourceId: input.unitId,
      externalIp: config.host,
      pool: config.portPool,
      protocol: port.protocol,
      internalPort: port.internalPort,
      isPrimary: true,
      isSystem: port.system,
    },
    now,
  );
  if (!made) throw unprocessable('no-free-port', 'No public port is free in the pool for the service.');
}
