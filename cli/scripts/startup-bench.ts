// How long `svcctl --help` takes to start, next to a bare `node -e 0` measured in the same run, so a
// slow or busy machine shows up in the baseline instead of as a regression. Budget: median < 150 ms.
//
//   npx tsx cli/scripts/startup-bench.ts [runs]     (builds the SDK and svcctl first if dist/ is missing)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../dist/svcctl.cjs', import.meta.url));
export const STARTUP_BUDGET_MS = 150;

export interface StartupMeasurement {
  medianMs: number;
  p90Ms: number;
  baselineMedianMs: number;
}

export async function measureStartup(
  options: { runs?: number; warmup?: number } = {},
): Promise<StartupMeasurement> {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 3;
  buildIfMissing();
  const cli = [BIN, '--help'];
  const baseline = ['-e', '0'];
  for (let i = 0; i < warmup; i += 1) {
    time(cli);
    time(baseline);
  }
  // Interleaved, so a burst of load elsewhere hits both series alike.
  const cliTimes: number[] = [];
  const baseTimes: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    cliTimes.push(time(cli));
    baseTimes.push(time(baseline));
  }
  return {
    medianMs: quantile(cliTimes, 0.5),
    p90Ms: quantile(cliTimes, 0.9),
    baselineMedianMs: quantile(baseTimes, 0.5),
  };
}

/** `npm run bench` may run on a fresh checkout: build the SDK and svcctl when their output is missing. */
function buildIfMissing(): void {
  if (existsSync(BIN)) return;
  const steps = [
    ...(existsSync(new URL('../../sdk/dist/index.js', import.meta.url))
      ? []
      : ['../../sdk/scripts/build.mjs']),
    './build.mjs',
  ];
  for (const step of steps) {
    const script = fileURLToPath(new URL(step, import.meta.url));
    const result = spawnSync(process.execPath, [script], { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`building for the start-up benchmark failed: node ${script}`);
  }
}

function time(args: string[]): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${String(result.stderr)}`);
  return ms;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const runs = Number(process.argv[2] ?? 30);
  const m = await measureStartup({ runs });
  const ratio = m.medianMs / m.baselineMedianMs;
  console.log(
    `svcctl --help  median ${m.medianMs.toFixed(1)} ms  p90 ${m.p90Ms.toFixed(1)} ms  (${runs} runs)`,
  );
  console.log(`node -e 0      median ${m.baselineMedianMs.toFixed(1)} ms`);
  console.log(`ratio          ${ratio.toFixed(2)}x  (+${(m.medianMs - m.baselineMedianMs).toFixed(1)} ms)`);
  console.log(`budget         ${STARTUP_BUDGET_MS} ms: ${m.medianMs < STARTUP_BUDGET_MS ? 'ok' : 'OVER'}`);
  process.exitCode = m.medianMs < STARTUP_BUDGET_MS ? 0 : 1;
}
