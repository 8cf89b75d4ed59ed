// The series of a window from the stored days (usage_day_series, written by the rollup job once a day
// can no longer change) and, live, only what they do not cover: for 30d the partial first day, the last
// day or two, and any day not stored yet. A stored day's points are the bytes json.ts writes for the
// same steps, so the answer is the same bytes as the whole window computed live (test/metrics). A stored
// day never changes, so each process keeps the days it read (storedDays): a chart reloaded, or watched,
// reads from PostgreSQL only its live part.
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

/** What the stored days kept in this process may hold, counted in characters (one byte each). */
const KEPT_CHARS = 64 * 1024 * 1024;
/** Stored days read, by `serviceId/day`, least recently used first. */
const kept = new Map<string, store.DaySeries>();
let keptChars = 0;

const charsOf = (d: store.SeriesText) =>
  d.cpu_percent.length +
  d.memory_bytes.length +
  d.disk_bytes.length +
  d.network_rx_bps.length +
  d.network_tx_bps.length;

/**
 * The service's stored days among `fromDay` to `toDay` (inclusive), oldest first: those kept in this
 * process, and the others read. A day the rollup job has not stored is read again next time.
 */
async function storedDays(
  db: Db,
  serviceId: string,
  fromDay: number,
  toDay: number,
): Promise<store.DaySeries[]> {
  const found: store.DaySeries[] = [];
  const missing: string[] = [];
  for (let d = fromDay; d <= toDay; d += DAY_MS) {
    const key = `${serviceId}/${dayOf(d)}`;
    const day = kept.get(key);
    if (day) {
      // Most recently used last.
      kept.delete(key);
      kept.set(key, day);
      found.push(day);
    } else missing.push(dayOf(d));
  }
  if (missing.length === 0) return found;
  for (const day of await store.daySeries(db, serviceId, missing)) {
    found.push(day);
    const key = `${serviceId}/${day.day}`;
    if (kept.has(key)) continue;
    kept.set(key, day);
    keptChars += charsOf(day);
  }
  for (const [key, day] of kept) {
    if (keptChars <= KEPT_CHARS) break;
    kept.delete(key);
    keptChars -= charsOf(day);
  }
  return found.sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** Forgets the stored days kept in this process (tests: to see an edited row). */
export function forgetStoredDays(): void {
  kept.clear();
  keptChars = 0;
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
  const stored = fromDay <= toDay ? await storedDays(db, serviceId, fromDay, toDay) : [];
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
