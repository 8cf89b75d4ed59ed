// Timing of the answers that must not tell whether an account exists (issue 26): forgot-password and
// sign-up for a known address against an unknown one, and a personal API token with a known id and a
// wrong secret against an unknown id. Each pair is sampled interleaved, a few hundred times, and the two
// distributions are compared with the Mann-Whitney U test (two-sided, normal approximation with ties
// averaged): p < 0.01 means the timing tells the cases apart. Medians and their ratio are reported beside.
// Run alone with `npx tsx scripts/bench/account-timing.ts [--samples=300]`, or as part of `npm run bench`.
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { cumulativeStdNormalProbability, median, wilcoxonRankSum } from 'simple-statistics';
import { createApp } from '../../server/src/app.js';
import { hashPassword } from '../../server/src/auth/crypto/passwords.js';
import { getOrCreateSecret, SECRET_NAMES } from '../../server/src/auth/crypto/server-secrets.js';
import { formatPersonalApiToken, keyedDigest, newSecret } from '../../server/src/auth/crypto/tokens.js';
import { loadConfig } from '../../server/src/config.js';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { insertToken } from '../../server/src/features/api-tokens/store.js';
import { createUser } from '../../server/src/features/auth/store.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createHttpServer } from '../../server/src/http/server.js';

export interface PairTiming {
  /** What is compared: `a` is the case that knows an account, `b` the one that does not. */
  name: string;
  samples: number;
  medianMs: { a: number; b: number };
  /** a's median over b's: 1.00 is the same. */
  ratio: number;
  /** Mann-Whitney U of sample a, and the two-sided p-value that both come from one distribution. */
  u: number;
  p: number;
}

export interface AccountTiming {
  pairs: PairTiming[];
}

/** Two-sided Mann-Whitney U test by the normal approximation (fine from about 20 samples each). */
export function mannWhitney(a: number[], b: number[]): { u: number; p: number } {
  const n1 = a.length;
  const n2 = b.length;
  const u = wilcoxonRankSum(a, b) - (n1 * (n1 + 1)) / 2;
  const z = (u - (n1 * n2) / 2) / Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
  return { u, p: Math.min(1, 2 * (1 - cumulativeStdNormalProbability(Math.abs(z)))) };
}

export async function measureAccountTiming(samples = 300): Promise<AccountTiming> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-account-'));
  const db = await startEmbeddedPostgres({ dir, persistent: false });
  try {
    const sql = connect(db.url, { max: 10 });
    await migrate(sql);
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      DATA_DIR: dir,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SOURCE_RATE_LIMIT_SCALE: '100000',
      // The request path only: what the jobs do afterwards is not what a caller can time.
      WORKER: 'off',
    });
    const app = createApp({ sql, config, log: createLogger('warn', destination({ dest: '/dev/null', sync: true })) });
    const server = createHttpServer(app.express).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
    const now = new Date();
    const known = await createUser(
      sql,
      { email: 'known@bench.test', passwordHash: await hashPassword('the right passphrase'), name: 'Bench', language: 'en', verified: true },
      now,
    );
    const pepper = await getOrCreateSecret(sql, SECRET_NAMES.apiTokenDigest);
    const tokenId = randomUUID();
    await insertToken(
      sql,
      {
        id: tokenId,
        userId: known!.id,
        name: 'bench',
        digest: keyedDigest(pepper, formatPersonalApiToken(tokenId, newSecret())),
        grants: [{ capability: 'me.read', scope: { kind: 'all' } }],
        adminAuthorized: false,
        expiresAt: null,
      },
      now,
    );

    const timed = async (path: string, init: RequestInit, clearLimits: boolean) => {
      // Per-address limits never scale; clear them so every sample takes the ordinary path.
      if (clearLimits) await sql`delete from rate_limit_buckets`;
      const start = process.hrtime.bigint();
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const post = (path: string, body: unknown) =>
      timed(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, true);
    const me = (token: string) => timed('/me', { headers: { authorization: `Bearer ${token}` } }, false);
    const unknown = () => `nobody-${randomUUID()}@bench.test`;

    const pairs: [string, () => Promise<number>, () => Promise<number>][] = [
      ['forgot-password: known vs unknown address', () => post('/auth/password/forgot', { email: 'known@bench.test' }), () => post('/auth/password/forgot', { email: unknown() })],
      [
        'sign-up: known vs unknown address',
        () => post('/auth/password/signup', { email: 'known@bench.test', password: 'a fine passphrase' }),
        () => post('/auth/password/signup', { email: unknown(), password: 'a fine passphrase' }),
      ],
      [
        'API token: known id, wrong secret vs unknown id',
        () => me(formatPersonalApiToken(tokenId, newSecret())),
        () => me(formatPersonalApiToken(randomUUID(), newSecret())),
      ],
    ];
    const out: PairTiming[] = [];
    for (const [name, a, b] of pairs) {
      const ta: number[] = [];
      const tb: number[] = [];
      for (let i = 0; i < 10; i += 1) {
        await a();
        await b();
      }
      // Interleaved, the order alternating, so drift in machine load falls on both alike.
      for (let i = 0; i < samples; i += 1) {
        if (i % 2 === 0) {
          ta.push(await a());
          tb.push(await b());
        } else {
          tb.push(await b());
          ta.push(await a());
        }
      }
      const ma = median(ta);
      const mb = median(tb);
      out.push({ name, samples, medianMs: { a: ma, b: mb }, ratio: ma / mb, ...mannWhitney(ta, tb) });
    }
    server.close();
    await sql.end();
    return { pairs: out };
  } finally {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The target: no pair told apart at p < 0.01. */
export const SIGNIFICANCE = 0.01;

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv.find((a) => a.startsWith('--samples='));
  const r = await measureAccountTiming(arg ? Number(arg.slice('--samples='.length)) : undefined);
  let ok = true;
  for (const p of r.pairs) {
    const apart = p.p < SIGNIFICANCE;
    ok &&= !apart;
    console.log(
      `${p.name}: medians ${p.medianMs.a.toFixed(3)} / ${p.medianMs.b.toFixed(3)} ms (${p.samples} each), ` +
        `ratio ${p.ratio.toFixed(3)}, Mann-Whitney U ${p.u.toFixed(0)}, p = ${p.p.toFixed(4)}  ${apart ? 'TOLD APART' : 'ok'}`,
    );
  }
  if (!ok && !process.argv.includes('--no-fail')) process.exit(1);
}
