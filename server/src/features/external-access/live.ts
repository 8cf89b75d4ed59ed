// The live state of a service's allocations: asked of every live edge (their `control_url`, GET /state)
// at once, each within about a second. What an edge does not confirm is left out and marks the answer
// degraded: an omitted allocation is unknown, never healthy (document 2 §4 "Live state").
import type { EdgeReport, LiveState } from '../../edge/report.js';
import type { AllocationRow, EdgeRow } from './store.js';

export const EDGE_TIMEOUT_MS = 1_000;

const SEVERITY: Record<LiveState, number> = { normal: 0, pressure: 1, attack: 2 };

async function askEdge(edge: EdgeRow, timeoutMs: number): Promise<EdgeReport | null> {
  try {
    const res = await fetch(new URL('/state', edge.control_url), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    const report = (await res.json()) as EdgeReport;
    return report && typeof report.allocations === 'object' && report.allocations !== null ? report : null;
  } catch {
    return null;
  }
}

export async function askEdges(
  edges: EdgeRow[],
  allocations: AllocationRow[],
  timeoutMs = EDGE_TIMEOUT_MS,
): Promise<{ degraded: boolean; allocations: { id: string; protection_state: LiveState }[] }> {
  const reports = await Promise.all(edges.map((edge) => askEdge(edge, timeoutMs)));
  let degraded = reports.some((r) => r === null);
  const live: { id: string; protection_state: LiveState }[] = [];
  for (const allocation of allocations) {
    // The edges serving the allocation's address must all have answered and all forward it.
    const serving = edges.flatMap((edge, i) => (edge.address === allocation.external_ip ? [reports[i]] : []));
    const states = serving.map((r) => r?.allocations[allocation.id]);
    if (states.length === 0 || states.some((s) => s === undefined || !(s in SEVERITY))) {
      degraded = true;
      continue;
    }
    const worst = (states as LiveState[]).reduce((a, b) => (SEVERITY[b] > SEVERITY[a] ? b : a), 'normal');
    live.push({ id: allocation.id, protection_state: worst });
  }
  return { degraded, allocations: live };
}
