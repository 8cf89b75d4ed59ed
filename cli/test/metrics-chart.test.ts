// `svcctl metrics` in table mode (output/metrics-chart.ts): a chart per series with min, max and latest,
// long periods averaged to the chart's width, gaps kept as gaps.
import { describe, expect, it } from 'vitest';
import { bytes, downsample, metricsCharts } from '../src/output/metrics-chart.js';

const at = (i: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, i * 10)).toISOString();
const series = (values: (number | null)[]) => values.map((v, i) => [at(i), v]);

describe('metrics charts', () => {
  it('averages down to the width and keeps a gap a gap', () => {
    expect(downsample([1, 3, null, null, 5, null], 3)).toEqual([2, NaN, 5]);
    expect(downsample([1, 2], 60)).toEqual([1, 2]);
  });

  it('says bytes in binary units', () => {
    expect([bytes(512), bytes(1536), bytes(3 * 1024 ** 3)]).toEqual(['512 B', '1.5 KiB', '3.0 GiB']);
  });

  it('draws each series with min, max and latest; a series never measured says so', () => {
    const out = metricsCharts({
      period: '1h',
      step_seconds: 10,
      series: {
        cpu_percent: series([10, null, 50, 20]),
        memory_bytes: series([1024 ** 2, 2 * 1024 ** 2, null, null]),
        disk_bytes: series([null, null, null, null]),
        network_rx_bytes_per_second: series([0, 0, 0, 0]),
        network_tx_bytes_per_second: series([1, 2, 3, 4]),
      },
    }) as string;
    expect(out).toContain('period 1h, a point every 10 s from 2026-11-21T12:00:00.000Z');
    expect(out).toContain('CPU (% of plan)  min 10.0%  max 50.0%  latest 20.0%');
    expect(out).toContain('Memory  min 1.0 MiB  max 2.0 MiB  latest 2.0 MiB');
    expect(out).toContain('Disk: nothing measured');
    expect(out).toMatch(/[┼┤]/);
    // The CPU's second point was not measured: marked under its column.
    expect(out).toContain('      gaps   × ');
  });

  it('leaves anything else as it came', () => {
    expect(metricsCharts({ nope: 1 })).toEqual({ nope: 1 });
  });
});
