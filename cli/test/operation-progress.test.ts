// How a waiting command shows an operation (output/operation-progress.ts): a plain line per change off
// a terminal, one bar redrawn in place on one. The real server's side is in e2e/services.test.ts.
import { describe, expect, it } from 'vitest';
import { barLine, plainLine, progressReporter } from '../src/output/operation-progress.js';

type Op = Parameters<typeof plainLine>[0];

const op = (
  status: Op['status'],
  phase: string | null = null,
  progress_percent: number | null = null,
): Op => ({
  id: 'o1',
  kind: 'reinstall',
  service_instance_id: 's1',
  status,
  phase,
  progress_percent,
  error: null,
  created_at: 'T',
  updated_at: 'T',
  completed_at: null,
});

describe('plainLine', () => {
  it.each([
    ['queued', { given: op('queued'), want: 'queued' }],
    ['a phase with its percent', { given: op('running', 'stop', 10), want: 'phase stop 10%' }],
    ['a phase without a percent', { given: op('running', 'install'), want: 'phase install' }],
    ['running before its first phase', { given: op('running', null, 0), want: 'running 0%' }],
    ['succeeded', { given: op('succeeded', 'boot', 100), want: 'succeeded' }],
    ['failed', { given: op('failed', 'install', 50), want: 'failed' }],
    ['cancelled', { given: op('cancelled'), want: 'cancelled' }],
  ])('%s', (_name, { given, want }) => {
    expect(plainLine(given)).toBe(want);
  });
});

describe('barLine', () => {
  it.each([
    ['queued: an empty bar, no percent', { given: op('queued'), want: `[${'.'.repeat(24)}]    -  queued` }],
    [
      'a phase at 50%',
      { given: op('running', 'install', 50), want: `[${'#'.repeat(12)}${'.'.repeat(12)}]  50%  install` },
    ],
    [
      'succeeded: full, even without a percent',
      { given: op('succeeded'), want: `[${'#'.repeat(24)}] 100%  succeeded` },
    ],
    [
      'a percent out of range is drawn within the bar',
      { given: op('running', 'x', 140), want: `[${'#'.repeat(24)}] 140%  x` },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(barLine(given)).toBe(want);
  });
});

function sink(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (text: string) => writes.push(text) } };
}

describe('progressReporter', () => {
  it('off a terminal writes a line per change and nothing for a repeat', () => {
    const { writes, stream } = sink(false);
    const reporter = progressReporter(stream);
    for (const o of [op('queued'), op('queued'), op('running', 'stop', 10), op('succeeded', 'boot', 100)])
      reporter.update(o);
    reporter.finish();
    expect(writes.join('')).toBe('queued\nphase stop 10%\nsucceeded\n');
  });

  it('on a terminal redraws one line in place and ends it once', () => {
    const { writes, stream } = sink(true, 80);
    const reporter = progressReporter(stream);
    reporter.update(op('running', 'stop', 10));
    reporter.update(op('running', 'stop', 10));
    reporter.update(op('succeeded', 'boot', 100));
    reporter.finish();
    reporter.finish();
    expect(writes).toEqual([
      `\r\x1b[2K${barLine(op('running', 'stop', 10))}`,
      `\r\x1b[2K${barLine(op('succeeded'))}`,
      '\n',
    ]);
  });

  it('on a narrow terminal cuts the line short of the edge, so it never wraps', () => {
    const { writes, stream } = sink(true, 20);
    progressReporter(stream).update(op('running', 'install', 50));
    expect(writes[0]).toBe(`\r\x1b[2K${barLine(op('running', 'install', 50)).slice(0, 19)}`);
  });
});
