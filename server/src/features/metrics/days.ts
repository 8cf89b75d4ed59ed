// The 5-minute series of a window (7d, 30d) from the stored days (usage_day_series, written by the
// rollup job once a day can no longer change) and, live, only what they do not cover: the window's
// partial first day, the last day or two, and any day not stored yet. Each part is the text seriesText
// gives for its steps, so joined they are the same bytes as the whole window computed live (test/metrics).
import type { Db } from '../../db/client.js';
import * as store from './store.js';

export const DAY_MS = 86_400_000;
const STEP_MS = 300_000;
const NAMES = ['cpu_percent', 'memory_bytes', 'disk_bytes', 'network_rx_bps', 'network_tx_bps'] as const;

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Steps `first` to `last` (inclusive, 5 minutes apart). */
export async function windowSeries(
  db: Db,
  serviceId: string,
  first: number,
  last: number,
): Promise<store.SeriesText> {
  const fromDay = Math.ceil(first / DAY_MS) * DAY_MS;
  const toDay = Math.floor((last + STEP_MS) / DAY_MS) * DAY_MS - DAY_MS;
  const stored = fromDay <= toDay ? await store.daySeries(db, serviceId, dayOf(fromDay), dayOf(toDay)) : [];
  if (stored.length === 0)
    return store.seriesText(db, serviceId, new Date(first), new Date(last), STEP_MS / 1000);

  // The window in order: a stored day, or a live range of steps between them.
  const parts: (store.SeriesText | { from: number; to: number })[] = [];
  let at = first;
  for (const day of stored) {
    const start = Date.parse(`${day.day}T00:00:00Z`);
    if (start > at) parts.push({ from: at, to: start - STEP_MS });
    parts.push(day);
    at = start + DAY_MS;
  }
  if (at <= last) parts.push({ from: at, to: last });
  const texts = await Promise.all(
    parts.map((p) =>
      'from' in p ? store.seriesText(db, serviceId, new Date(p.from), new Date(p.to), STEP_MS / 1000) : p,
    ),
  );
  const out = {} as store.SeriesText;
  for (const name of NAMES) out[name] = texts.map((t) => t[name]).join(',');
  return out;
}
