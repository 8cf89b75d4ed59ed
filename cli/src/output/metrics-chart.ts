// `svcctl metrics SERVICE` in table mode (issue 35): each series drawn as a terminal chart by asciichart,
// with its min, max and latest; `-o json` prints the series themselves. A long period is averaged down
// to the chart's width; a stretch with nothing measured stays a gap, never drawn as zero.
import { plot } from 'asciichart';
import { isRecord } from './table.js';

const WIDTH = 60;
const HEIGHT = 6;

type Point = [string, number | null];

const TITLES: Record<string, { title: string; format: (v: number) => string }> = {
  cpu_percent: { title: 'CPU (% of plan)', format: (v) => `${v.toFixed(1)}%` },
  memory_bytes: { title: 'Memory', format: bytes },
  disk_bytes: { title: 'Disk', format: bytes },
  network_rx_bytes_per_second: { title: 'Network in', format: (v) => `${bytes(v)}/s` },
  network_tx_bytes_per_second: { title: 'Network out', format: (v) => `${bytes(v)}/s` },
};

export function bytes(v: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** At most WIDTH columns, each the mean of the values it covers; NaN (a gap) where it covers none. */
export function downsample(values: (number | null)[], width = WIDTH): number[] {
  const per = Math.max(1, Math.ceil(values.length / width));
  const out: number[] = [];
  for (let i = 0; i < values.length; i += per) {
    const known = values.slice(i, i + per).filter((v): v is number => v !== null);
    out.push(known.length === 0 ? NaN : known.reduce((a, b) => a + b, 0) / known.length);
  }
  return out;
}

function chartOf(name: string, points: Point[]): string {
  const { title, format } = TITLES[name] ?? { title: name, format: String };
  const values = points.map((p) => p[1]);
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return `${title}: nothing measured\n`;
  const latest = known[known.length - 1]!;
  const head = `${title}  min ${format(Math.min(...known))}  max ${format(Math.max(...known))}  latest ${format(latest)}`;
  const columns = downsample(values);
  // asciichart draws no gaps: the line holds its last value across one (its first known value before
  // the first), and a row under the chart marks each column where nothing was measured.
  let carried = known[0]!;
  const drawn = columns.map((v) => (Number.isNaN(v) ? carried : (carried = v)));
  const [min, max] = [Math.min(...known), Math.max(...known)];
  const chart = plot(drawn, {
    height: HEIGHT,
    min,
    max: max === min ? min + 1 : max,
    format: (v: number) => format(v).padStart(10),
  });
  const gaps = columns.some(Number.isNaN)
    ? `\n${'gaps'.padStart(10)}  ${columns.map((v) => (Number.isNaN(v) ? '×' : ' ')).join('')}`
    : '';
  return `${head}\n${chart}${gaps}\n`;
}

/** The metrics answer as charts; anything else as it came. */
export function metricsCharts(answer: unknown): unknown {
  if (!isRecord(answer) || !isRecord(answer.series)) return answer;
  const series = answer.series as Record<string, Point[]>;
  const first = Object.values(series)[0]?.[0]?.[0];
  const header = `period ${String(answer.period)}, a point every ${String(answer.step_seconds)} s${first ? ` from ${first}` : ''}\n\n`;
  return (
    header +
    Object.entries(series)
      .map(([name, points]) => chartOf(name, points))
      .join('\n')
  );
}
