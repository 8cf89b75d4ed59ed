// GET /service-instances/{id}/metrics (DECISIONS.md §8 "Usage metrics"): the period's steps, oldest
// first, each series a value or null per step, so a chart shows a gap where nothing was measured.
import type { components } from '../../../../generated/api.js';
import type { AreaHandlers, ResultOf } from '../../http/handler.js';
import { requireService } from '../services/access.js';
import { liveParts, STEP_MS, windowParts } from './days.js';
import { metricsJson } from './json.js';
import { SAMPLE_MS } from './sampler.js';

type Period = components['schemas']['MetricsPeriod'];

const PERIOD_MS: Record<Period, number> = {
  '1h': 3600_000,
  '24h': 86400_000,
  '7d': 7 * 86400_000,
  '30d': 30 * 86400_000,
};

export const metricsHandlers: AreaHandlers<'serviceMetricsGet'> = {
  async serviceMetricsGet({ path, query, auth, ctx }) {
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    const period: Period = query.period ?? '1h';
    const step = period === '1h' ? SAMPLE_MS : STEP_MS;
    const now = ctx.clock.now().getTime();
    // The newest step is the one now falls in; the oldest the one a period before it.
    const last = Math.floor(now / step) * step;
    const first = last - PERIOD_MS[period] + step;
    // 7d and 30d hold whole days that no longer change: most of their answer is stored (days.ts).
    const parts =
      period === '7d' || period === '30d'
        ? await windowParts(ctx.sql, access.service.id, first, last)
        : await liveParts(ctx.sql, access.service.id, first, last, step);
    const body = metricsJson({ period, step_seconds: step / 1000 }, parts);
    // The ServiceMetrics JSON, already written (json.ts): bind.ts sends a buffer as it is, where an
    // object would be serialised again. The typed result has no such form for a JSON answer, hence the
    // cast; test/metrics checks the body against the spec's schema, which the response validator of
    // development and tests (it hooks res.json) does not see.
    return { status: 200, body, contentType: 'application/json' } as unknown as ResultOf<'serviceMetricsGet'>;
  },
};
