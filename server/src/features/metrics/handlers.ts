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

/**
 * One point per step from `first` to `last`; steps without a row are null. Built series by series over
 * arrays indexed by step (a 30-day answer is 8,640 steps of five series), each step's time formatted once.
 */
function series(points: store.Point[], first: number, last: number, step: number) {
  const count = Math.floor((last - first) / step) + 1;
  const times = Array.from({ length: count }, (_, i) => new Date(first + i * step).toISOString());
  const at: (store.Point | undefined)[] = new Array<store.Point | undefined>(count);
  for (const point of points) {
    const i = (point.at_ms - first) / step;
    if (Number.isInteger(i) && i >= 0 && i < count) at[i] = point;
  }
  const one = (column: keyof Omit<store.Point, 'at_ms'>): Series =>
    times.map((time, i) => {
      const value = at[i]?.[column];
      return [time, value === null || value === undefined ? null : Number(value)];
    });
  return Object.fromEntries(Object.entries(SERIES).map(([name, column]) => [name, one(column)])) as Record<
    keyof typeof SERIES,
    Series
  >;
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
