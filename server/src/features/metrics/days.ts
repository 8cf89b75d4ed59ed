// The series of a window from the stored days (usage_day_series, written by the rollup job once a day
// can no longer change) and, live, only what they do not cover: for 30d the partial first day, the last
// day or two, and any day not stored yet. A stored day's points are the bytes json.ts writes for the
// same steps, so the answer is the same bytes as the whole window computed live (test/metrics).
import type { Db } from '../../db/client.js';
import type { SeriesPart } from './json.js';
import * as store from './store.js';

export const DAY_MS = 86_400_000;
/** The step of 7d and 30d (and of the rollups). */
export const STEP_MS = 300_000;

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The answer's name of each series, from the store's. */
const answerNames = (s: store.SeriesText): Record<string, string> => ({
  cpu_percent: s.cpu_percent,
  memory_bytes: s.memory_bytes,
  disk_bytes: s.disk_bytes,
  network_rx_bytes_per_second: s.network_rx_bps,
  network_tx_bytes_per_second: s.network_tx_bps,
});

/** Steps `first` to `last` (inclusive, `stepMs` apart) all computed live. */
export async function liveParts(
  db: Db,
  serviceId: string,
  first: number,
  last: number,
  stepMs: number,
): Promise<SeriesPart[]> {
  const s = await store.seriesText(db, serviceId, new Date(first), new Date(last), stepMs / 1000);
  return [{ first, count: (last - first) / stepMs + 1, values: answerNames(s) }];
}

/** 5-minute steps `first` to `last` (inclusive): the stored days among them, the rest live. */
export async function windowParts(
  db: Db,
  serviceId: string,
  first: number,
  last: number,
): Promise<SeriesPart[]> {
  const fromDay = Math.ceil(first / DAY_MS) * DAY_MS;
  const toDay = Math.floor((last + STEP_MS) / DAY_MS) * DAY_MS - DAY_MS;
  const stored = fromDay <= toDay ? await store.daySeries(db, serviceId, dayOf(fromDay), dayOf(toDay)) : [];
  if (stored.length === 0) return liveParts(db, serviceId, first, last, STEP_MS);
  // The window in order: a stored day, or a live range of steps between them.
  const parts: (SeriesPart | Promise<SeriesPart[]>)[] = [];
  let at = first;
  for (const day of stored) {
    const start = Date.parse(`${day.day}T00:00:00Z`);
    if (start > at) parts.push(liveParts(db, serviceId, at, start - STEP_MS, STEP_MS));
    parts.push({ points: answerNames(day) });
    at = start + DAY_MS;
  }
  if (at <= last) parts.push(liveParts(db, serviceId, at, last, STEP_MS));
  return (await Promise.all(parts)).flat();
}
