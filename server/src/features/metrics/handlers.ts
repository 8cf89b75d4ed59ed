// GET /service-instances/{id}/metrics (DECISIONS.md §8 "Usage metrics"): the period's steps, oldest
// first, each series a value or null per step, so a chart shows a gap where nothing was measured.
import type { components } from '../../../../generated/api.js';
import type { AreaHandlers } from '../../http/handler.js';
import { requireService } from '../services/access.js';
import { SAMPLE_MS } from './sampler.js';
import * as store from './store.js';

type Period = components['schemas']['MetricsPeriod'];
type Series = components['schemas']['MetricsSeries'];

const PERIOD_MS: Record<Period, number> = {
  '1h': 3600_000,
  '24h': 86400_000,
  '7d': 7 * 86400_000,
  '30d': 30 * 86400_000,
};
const STEP_MS = 300_000;

const SERIES = {
  cpu_percent: 'cpu_percent',
  memory_bytes: 'memory_bytes',
  disk_bytes: 'disk_bytes',
  network_rx_bytes_per_second: 'network_rx_bps',
  network_tx_bytes_per_second: 'network_tx_bps',
} as const;

/** One point per step from `first` up to now; steps without a row are null. */
function series(points: store.Point[], first: number, last: number, step: number) {
  const byAt = new Map(points.map((p) => [new Date(p.at).getTime(), p]));
  const out = Object.fromEntries(Object.keys(SERIES).map((k) => [k, [] as Series])) as Record<
    keyof typeof SERIES,
    Series
  >;
  for (let t = first; t <= last; t += step) {
    const point = byAt.get(t);
    const time = new Date(t).toISOString();
    for (const [name, column] of Object.entries(SERIES) as [keyof typeof SERIES, keyof store.Point][]) {
      const value = point?.[column];
      out[name].push([time, value === null || value === undefined ? null : Number(value)]);
    }
  }
  return out;
}

export const metricsHandlers: AreaHandlers<'serviceMetricsGet'> = {
  async serviceMetricsGet({ path, query, auth, ctx }) {
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    const period: Period = query.period ?? '1h';
    const step = period === '1h' ? SAMPLE_MS : STEP_MS;
    const now = ctx.clock.now().getTime();
    // The newest step is the one now falls in; the oldest the one a period before it.
    const last = Math.floor(now / step) * step;
    const first = last - PERIOD_MS[period] + step;
    const from = new Date(first);
    const points =
      period === '1h'
        ? await store.rawPoints(ctx.sql, access.service.id, from)
        : await store.stepPoints(ctx.sql, access.service.id, from);
    return {
      status: 200,
      body: { period, step_seconds: step / 1000, series: series(points, first, last, step) },
    };
  },
};
