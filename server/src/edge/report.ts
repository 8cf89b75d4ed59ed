// What an edge's control listener answers at GET /state (control.ts), and the API's live route reads
// (features/external-access/live.ts): the edge owns its answer's shape, the feature depends on it.

/** How an allocation's traffic looks to the edge that forwards it. */
export type LiveState = 'normal' | 'pressure' | 'attack';

export interface EdgeReport {
  edge_id: string;
  applied_generation: number;
  allocations: Record<string, LiveState>;
}
