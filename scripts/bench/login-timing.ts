// Login timing: a wrong password for a known address, any password for an unknown address, and the
// right password must take the same time, or the answer's timing tells which addresses have accounts.
// Run alone with `npx tsx scripts/bench/login-timing.ts`, or as part of `npm run bench`.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { createApp } from '../../server/src/app.js';
import { hashPassword } from '../../server/src/auth/crypto/passwords.js';
import { loadConfig } from '../../server/src/config.js';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createUser } from '../../server/src/features/auth/store.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createHttpServer } from '../../server/src/http/server.js';

export interface LoginTiming {
  samples: number;
  medianMs: { unknownAddress: number; wrongPassword: number; rightPassword: number };
  /** Each case's median over the unknown-address median: 1.00 is indistinguishable. */
  ratios: { wrongVsUnknown: number; rightVsWrong: number };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export async function measureLoginTiming(samples = 40): Promise<LoginTiming> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-login-'));
  const db = await startEmbeddedPostgres({ dir, persistent: false });
  try {
    const sql = connect(db.url, { max: 10 });
    await migrate(sql);
    // Production requires an ENCRYPTION_KEY: one for this run.
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      DATA_DIR: dir,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SOURCE_RATE_LIMIT_SCALE: '100000',
    });
    const app = createApp({ sql, config, log: createLogger('warn', destination({ dest: '/dev/null', sync: true })) });
    const server = createHttpServer(app.express).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
    const now = new Date();
    await createUser(sql, { email: 'known@bench.test', passwordHash: await hashPassword('the right passphrase'), name: 'Bench', language: 'en', verified: true }, now);

    const login = async (email: string, password: string) => {
      // Per-address limits never scale; clear them so every sample takes the ordinary path.
      await sql`delete from rate_limit_buckets`;
      const start = process.hrtime.bigint();
      const res = await fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      await res.arrayBuffer();
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const cases = {
      unknownAddress: () => login(`nobody-${Math.random().toString(36).slice(2)}@bench.test`, 'some wrong passphrase'),
      wrongPassword: () => login('known@bench.test', 'some wrong passphrase'),
      rightPassword: () => login('known@bench.test', 'the right passphrase'),
    };
    const times: Record<keyof typeof cases, number[]> = { unknownAddress: [], wrongPassword: [], rightPassword: [] };
    for (let i = 0; i < 5; i += 1) for (const run of Object.values(cases)) await run();
    // Interleaved, so drift in machine load falls on every case alike.
    for (let i = 0; i < samples; i += 1) {
      for (const [name, run] of Object.entries(cases) as [keyof typeof cases, () => Promise<number>][]) {
        times[name].push(await run());
      }
    }
    server.close();
    await sql.end();
    const m = { unknownAddress: median(times.unknownAddress), wrongPassword: median(times.wrongPassword), rightPassword: median(times.rightPassword) };
    return {
      samples,
      medianMs: m,
      ratios: { wrongVsUnknown: m.wrongPassword / m.unknownAddress, rightVsWrong: m.rightPassword / m.wrongPassword },
    };
  } finally {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await measureLoginTiming();
  const f = (x: number) => x.toFixed(1).padStart(7);
  console.log(`login timing, median of ${r.samples} interleaved samples each (ms)`);
  console.log(`  unknown address      ${f(r.medianMs.unknownAddress)}`);
  console.log(`  known, wrong password${f(r.medianMs.wrongPassword)}   ratio to unknown ${r.ratios.wrongVsUnknown.toFixed(3)}`);
  console.log(`  known, right password${f(r.medianMs.rightPassword)}   ratio to wrong   ${r.ratios.rightVsWrong.toFixed(3)}`);
  const ok = Math.abs(r.ratios.wrongVsUnknown - 1) <= 0.1 && Math.abs(r.ratios.rightVsWrong - 1) <= 0.1;
  console.log(ok ? 'target met: within 10%' : 'TARGET MISSED: more than 10% apart');
  if (!ok && !process.argv.includes('--no-fail')) process.exit(1);
}
