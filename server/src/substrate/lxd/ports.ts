// A unit's ports, reachable at its address on the member's host: one LXD proxy device per port, listening
// on the unit's address (a loopback address of the host) and connecting to the same address and port
// inside the container, where the unit's programs listen (SVC_BIND_ADDRESS). The edge forwards the
// allocations there, as it does to the local substrate's processes.
import type { ExposedPort } from '../driver.js';
import type { LxdClient } from './client.js';
import { putDevices, type Instance } from './instances.js';

/** Devices of the allocations' ports (exposePorts) and of the ports the control plane reaches (RCON). */
export const ALLOCATED = 'port-';
export const PRIVATE = 'private-';

interface FullInstance extends Instance {
  devices: Record<string, Record<string, string>>;
}

/** The proxy devices, named with `prefix`, making `ports` of the unit reachable at its address on the host. */
export function portDevices(
  prefix: string,
  address: string,
  ports: readonly ExposedPort[],
): Record<string, Record<string, string>> {
  const devices: Record<string, Record<string, string>> = {};
  for (const { protocol, port } of ports) {
    devices[`${prefix}${protocol}-${port}`] = {
      type: 'proxy',
      listen: `${protocol}:${address}:${port}`,
      connect: `${protocol}:${address}:${port}`,
      bind: 'host',
    };
  }
  return devices;
}

/** Makes the instance's devices named with `prefix` exactly these ports' (others of the prefix go). */
export async function setPortDevices(
  client: LxdClient,
  instance: Instance,
  address: string,
  ports: readonly ExposedPort[],
  prefix = ALLOCATED,
): Promise<void> {
  const current = (instance as FullInstance).devices ?? {};
  const wanted = portDevices(prefix, address, ports);
  const kept = Object.fromEntries(Object.entries(current).filter(([name]) => !name.startsWith(prefix)));
  const next = { ...kept, ...wanted };
  if (sameDevices(current, next)) return;
  // Exactly these: a released port's device goes.
  const { metadata: full } = await client.call<Record<string, unknown>>(
    'GET',
    `/1.0/instances/${instance.name}`,
  );
  await putDevices(client, instance.name, full, next);
}

function sameDevices(
  a: Record<string, Record<string, string>>,
  b: Record<string, Record<string, string>>,
): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const canonical = (d: Record<string, string> | undefined) => JSON.stringify(Object.entries(d ?? {}).sort());
  return keys.every((k) => canonical(a[k]) === canonical(b[k]));
}
