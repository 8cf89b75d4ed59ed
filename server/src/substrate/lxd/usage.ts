// What an LXD unit uses (DECISIONS.md §8 "Usage metrics"), from the instance's state
// (GET /1.0/instances/{name}/state): CPU time and memory of its cgroup, its volume device's usage (where
// the storage driver reports one) and the counters of its network interfaces, seen from inside.
import type { UnitUsage } from '../driver.js';
import type { LxdClient } from './client.js';

interface InstanceState {
  status: string;
  cpu?: { usage?: number };
  memory?: { usage?: number };
  disk?: Record<string, { usage?: number }> | null;
  network?: Record<
    string,
    { type?: string; counters?: { bytes_received?: number; bytes_sent?: number } }
  > | null;
}

const known = (n: number | undefined): number | null => (typeof n === 'number' && n >= 0 ? n : null);

/** The interfaces' counters summed, loopback aside; null when the instance reports none. */
function networkOf(state: InstanceState): Pick<UnitUsage, 'networkRxBytes' | 'networkTxBytes'> {
  const nics = Object.values(state.network ?? {}).filter((n) => n.type !== 'loopback' && n.counters);
  if (nics.length === 0) return { networkRxBytes: null, networkTxBytes: null };
  const sum = (key: 'bytes_received' | 'bytes_sent') => nics.reduce((t, n) => t + (n.counters![key] ?? 0), 0);
  return { networkRxBytes: sum('bytes_received'), networkTxBytes: sum('bytes_sent') };
}

/** The running instance's usage; null when it is absent or not running. `disk` names its volume device. */
export async function lxdUnitUsage(client: LxdClient, name: string, disk: string): Promise<UnitUsage | null> {
  const state = await client.find<InstanceState>(`/1.0/instances/${name}/state`);
  if (!state || state.status !== 'Running') return null;
  return {
    cpuNanoseconds: known(state.cpu?.usage),
    memoryBytes: known(state.memory?.usage),
    diskBytes: known(state.disk?.[disk]?.usage),
    ...networkOf(state),
  };
}
