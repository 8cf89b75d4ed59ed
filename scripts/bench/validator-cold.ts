// The validator's first request of each route, patched (patches/express-openapi-validator+5.6.2.patch,
// util.js: the document added to ajv once, a route's schema its own part) against the stock 5.6.2 made by
// stock-validator.ts. Each measurement is a fresh process: the bundled spec's validator (request and
// response checks, as tests and development run it) in one Express layer, every operation of the spec
// asked once (the cold pass: each builds its validators), then once more (the warm pass). Reported: the
// cold pass's cost over the warm one per route, for each, and their ratio; slices interleave the two.
//
//   npx tsx scripts/bench/validator-cold.ts [--slices=5]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { prepareStockValidator, useStockValidator } from './stock-validator.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const UUID = '00000000-0000-4000-8000-000000000000';

interface Pass {
  routes: number;
  coldMs: number;
  warmMs: number;
}

async function child(): Promise<void> {
  const stock = process.env.BENCH_STOCK_EOV;
  if (stock) useStockValidator(stock);
  const { default: express } = await import('express');
  const { bundledSpec, API_BASE_PATH } = await import('../../server/src/spec.js');
  const { openApiValidator } = await import('../../server/src/http/validator.js');
  const { series } = await import('../../server/src/http/series.js');
  const app = express();
  app.use(express.json());
  app.use(series([...openApiValidator(bundledSpec, true), (_req, res) => void res.status(200).json({})]));
  app.use((_err: unknown, _req: unknown, res: { status(n: number): { end(): void } }, _next: unknown) =>
    res.status(599).end(),
  );
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  const requests: { url: string; init: RequestInit }[] = [];
  for (const [path, item] of Object.entries(bundledSpec.paths as Record<string, Record<string, unknown>>)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method] as { requestBody?: unknown } | undefined;
      if (!op) continue;
      requests.push({
        url: base + path.replace(/\{[^}]+\}/g, UUID),
        init: op.requestBody
          ? { method: method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: '{}' }
          : { method: method.toUpperCase() },
      });
    }
  }
  const pass = async () => {
    const started = performance.now();
    for (const r of requests) await (await fetch(r.url, r.init)).arrayBuffer();
    return performance.now() - started;
  };
  const coldMs = await pass();
  const warmMs = await pass();
  server.close();
  process.stdout.write(JSON.stringify({ routes: requests.length, coldMs, warmMs } satisfies Pass));
}

async function measure(stockPath: string | null): Promise<Pass> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, 'child'], {
    cwd: ROOT,
    env: { ...process.env, ...(stockPath ? { BENCH_STOCK_EOV: stockPath } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(proc, 'exit')) as [number];
  if (code !== 0) throw new Error(`the bench child exited ${code}`);
  return JSON.parse(out) as Pass;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Lines of the report, for `npm run bench` (run.ts) and this script alone. */
export async function measureValidatorCold(slices = 5): Promise<string[]> {
  const stockPath = prepareStockValidator(ROOT);
  const perRoute = { patched: [] as number[], stock: [] as number[] };
  let routes = 0;
  for (let i = 0; i < slices; i += 1) {
    const order: ('patched' | 'stock')[] = i % 2 === 0 ? ['patched', 'stock'] : ['stock', 'patched'];
    for (const which of order) {
      const pass = await measure(which === 'stock' ? stockPath : null);
      routes = pass.routes;
      perRoute[which].push((pass.coldMs - pass.warmMs) / pass.routes);
    }
  }
  const patched = median(perRoute.patched);
  const stock = median(perRoute.stock);
  return [
    `  first request of each of ${routes} operations, over a warm one (median of ${slices}):`,
    `  stock 5.6.2  ${stock.toFixed(2)} ms per route`,
    `  patched      ${patched.toFixed(2)} ms per route   ${(stock / patched).toFixed(2)}x faster`,
  ];
}

if (process.argv[2] === 'child') await child();
else if (process.argv[1] === SELF) {
  const slices = Number(
    /^--slices=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--slices=')) ?? '')?.[1] ?? 5,
  );
  console.log("The validator's first request of each route (scripts/bench/validator-cold.ts)");
  for (const line of await measureValidatorCold(slices)) console.log(line);
}
