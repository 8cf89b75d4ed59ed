// The answers of external access, built from rows (an allow-list: a new column never leaks).
import type { AllocationRow } from './store.js';

/** Slots every service has (document 2 §8), on top of staff's extra_slots. */
export const BASE_PORT_SLOTS = 3;

export function toAllocation(a: AllocationRow) {
  return {
    id: a.id,
    external_ip: a.external_ip,
    external_port: a.external_port,
    internal_port: a.internal_port,
    protocol: a.protocol,
    is_primary: a.is_primary,
    is_system: a.is_system,
    allocated_at: a.allocated_at.toISOString(),
    network_protection_mode: a.network_protection_mode,
    // The edge forwards every allocation and owns what protection it has; the listing never probes it.
    protection_managed: true,
    protection_state: 'unknown' as const,
    display: `${a.external_ip}:${a.external_port}/${a.protocol}`,
  };
}

export function slots(usage: { used: number; extra_slots: number }) {
  return {
    used: usage.used,
    extra_slots: usage.extra_slots,
    free_slots: Math.max(0, BASE_PORT_SLOTS + usage.extra_slots - usage.used),
  };
}

/** The ingress's public ports: what a live edge reports, else the configured ones (null: off or unknown). */
export interface IngressPorts {
  http: number | null;
  https: number | null;
}

/** `https://{domain}` once active, else `http://{domain}`, with the port unless it is the scheme's own. */
export function toHttpExposure(
  row: { hostname: string; status: 'pending' | 'active' | 'failed'; status_reason: string | null },
  ports: IngressPorts,
) {
  const secure = row.status === 'active' && ports.https !== null;
  const port = secure ? ports.https : ports.http;
  const standard = secure ? 443 : 80;
  const suffix = port === null || port === standard ? '' : `:${port}`;
  return {
    domain: row.hostname,
    status: row.status,
    status_reason: row.status_reason,
    url: `${secure ? 'https' : 'http'}://${row.hostname}${suffix}`,
  };
}
