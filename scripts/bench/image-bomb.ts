// Image bomb: a 20000×20000 PNG of a few dozen KB (400 megapixels, gigabytes once decoded) must be
// refused at once, from its header, with no pixel memory spent. Measured through the image pipeline
// (normalizeImage) and through PUT /api/v2/me/avatar, each against a baseline from the same run, with
// the ordinary avatar's processing time beside it and the peak RSS each one adds.
// Run alone with `npx tsx scripts/bench/image-bomb.ts`, or as part of `npm run bench`.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import sharp from 'sharp';
import { createApp } from '../../server/src/app.js';
import { signAccessToken } from '../../server/src/auth/crypto/access-tokens.js';
import { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import { loadConfig } from '../../server/src/config.js';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createSession, createUser } from '../../server/src/features/auth/store.js';
import { systemClock } from '../../server/src/clock.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createHttpServer } from '../../server/src/http/server.js';
import { MAX_INPUT_PIXELS, normalizeImage } from '../../server/src/images/normalize.js';
import { SecretBox } from '../../server/src/secrets/secret-box.js';
import { pngBomb } from '../../test/support/images.js';

/** The bomb is refused in under this, through the pipeline and through the route. */
export const BOMB_BUDGET_MS = 5;

export interface Case {
  medianMs: number;
  p90Ms: number;
  /** Peak resident memory above the level before the case ran, in MB. */
  peakRssDeltaMb: number;
}

export interface ImageBombFigures {
  bombBytes: number;
  pipeline: {
    samples: number;
    bomb: Case;
    /** Baseline: decoding a 16×16 PNG with sharp. */
    tinyDecode: Case;
    /** A 1600×1200 JPEG photo to a 512×512 WebP avatar. */
    avatar: Case;
    /** For comparison: sharp alone (limitInputPixels, no header check first) refusing the bomb. */
    sharpAloneBomb: Case;
  };
  http: {
    samples: number;
    bomb: Case;
    /** Baseline: the same route refusing a file of the bomb's size that is no image at all (415). */
    junk415: Case;
    avatar: Case;
  };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/**
 * Runs each case `samples` times after a warm-up, interleaved (A B C, C B A, ...) so that a burst of
 * load elsewhere falls on every case alike; times each run and tracks the peak RSS above the level
 * before the case's own run.
 */
async function interleaved<K extends string>(
  samples: number,
  cases: Record<K, () => Promise<unknown>>,
): Promise<Record<K, Case>> {
  const names = Object.keys(cases) as K[];
  for (let i = 0; i < Math.min(5, samples); i += 1) for (const name of names) await cases[name]();
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  const peaks = Object.fromEntries(names.map((n) => [n, 0])) as Record<K, number>;
  let current = process.memoryUsage.rss();
  let peak = current;
  // Sampled while a case runs (a decode runs on libuv's threads, so the event loop is free to sample).
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 1);
  try {
    for (let i = 0; i < samples; i += 1) {
      for (const name of i % 2 === 0 ? names : [...names].reverse()) {
        current = process.memoryUsage.rss();
        peak = current;
        const start = process.hrtime.bigint();
        await cases[name]();
        times[name].push(Number(process.hrtime.bigint() - start) / 1e6);
        peak = Math.max(peak, process.memoryUsage.rss());
        peaks[name] = Math.max(peaks[name], peak - current);
      }
    }
  } finally {
    clearInterval(sampler);
  }
  return Object.fromEntries(
    names.map((n) => [
      n,
      {
        medianMs: quantile(times[n], 0.5),
        p90Ms: quantile(times[n], 0.9),
        peakRssDeltaMb: peaks[n] / (1024 * 1024),
      },
    ]),
  ) as Record<K, Case>;
}

const refusedWith = (status: number) => async (res: Response) => {
  await res.arrayBuffer();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
};

async function photo(): Promise<Buffer> {
  // Smooth gradients with some noise: closer to a photo than flat colour or pure noise.
  const width = 1600;
  const height = 1200;
  const noise = await sharp(randomBytes((width / 8) * (height / 8) * 3), {
    raw: { width: width / 8, height: height / 8, channels: 3 },
  })
    .resize(width, height, { kernel: 'cubic' })
    .jpeg({ quality: 85 })
    .toBuffer();
  return noise;
}

export async function measureImageBomb(samples = 200): Promise<ImageBombFigures> {
  const bomb = pngBomb(20_000);
  const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } })
    .png()
    .toBuffer();
  const jpeg = await photo();
  const junk = randomBytes(bomb.length);
  const avatarSamples = Math.max(10, Math.round(samples / 10));

  const refuseBomb = () =>
    normalizeImage(bomb, { size: 512 }).then(
      () => {
        throw new Error('the bomb was accepted');
      },
      () => undefined,
    );
  const fast = await interleaved(samples, {
    bomb: refuseBomb,
    tinyDecode: () => sharp(tiny).raw().toBuffer(),
  });
  const slow = await interleaved(avatarSamples, {
    avatar: () => normalizeImage(jpeg, { size: 512 }),
    sharpAloneBomb: () =>
      sharp(bomb, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
        .raw()
        .toBuffer()
        .then(
          () => {
            throw new Error('sharp decoded the bomb');
          },
          () => undefined,
        ),
  });
  const pipeline = { samples, ...fast, ...slow };

  const dir = await mkdtemp(join(tmpdir(), 'bench-image-bomb-'));
  const db = await startEmbeddedPostgres({ dir, persistent: false });
  try {
    const sql = connect(db.url, { max: 10 });
    await migrate(sql);
    const box = SecretBox.of([randomBytes(32)]);
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      DATA_DIR: dir,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    const app = createApp({
      sql,
      config,
      box,
      log: createLogger('warn', destination({ dest: '/dev/null', sync: true })),
    });
    const server = createHttpServer(app.express).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/me/avatar`;

    const now = new Date();
    const user = await createUser(
      sql,
      { email: 'bomb@bench.test', passwordHash: null, name: 'Bench', language: 'en', verified: true },
      now,
    );
    const day = new Date(now.getTime() + 86_400_000);
    const session = await createSession(
      sql,
      { userId: user!.id, absoluteExpiresAt: day, idleExpiresAt: day, userAgent: 'bench', ip: '127.0.0.1' },
      now,
    );
    const { token } = await signAccessToken(
      new KeyRing(sql, systemClock, box),
      { sub: user!.id, sid: session.id, ttlSeconds: 3600 },
      systemClock.now(),
    );

    const blob = (bytes: Buffer) => new Blob([new Uint8Array(bytes)], { type: 'image/png' });
    const uploads = { bomb: blob(bomb), junk: blob(junk), photo: blob(jpeg) };
    const put = async (file: Blob, name: string) => {
      // The upload limit (10 per 10 minutes) is the caller's; clear it so every sample takes the same path.
      await sql`delete from rate_limit_buckets`;
      const form = new FormData();
      form.append('file', file, name);
      return fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: form });
    };
    const httpSamples = Math.max(20, Math.round(samples / 4));
    const refusals = await interleaved(httpSamples, {
      bomb: () => put(uploads.bomb, 'bomb.png').then(refusedWith(400)),
      junk415: () => put(uploads.junk, 'junk.png').then(refusedWith(415)),
    });
    const accepted = await interleaved(avatarSamples, {
      avatar: () => put(uploads.photo, 'photo.jpg').then(refusedWith(200)),
    });
    const http = { samples: httpSamples, ...refusals, ...accepted };
    server.close();
    await sql.end();
    return { bombBytes: bomb.length, pipeline, http };
  } finally {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The report's lines, and whether the targets hold: the pipeline refuses the bomb in under
 * BOMB_BUDGET_MS, and over HTTP the bomb costs less than BOMB_BUDGET_MS more than a same-size upload
 * refused at its first bytes (the route's own work, authentication and the upload, is in both).
 */
export function describeImageBomb(r: ImageBombFigures): { lines: string[]; ok: boolean } {
  const ms = (x: number) => `${x.toFixed(Math.abs(x) < 1 ? 3 : 1)} ms`;
  const mb = (x: number) => `${x.toFixed(1)} MB`;
  const line = (label: string, c: Case, base?: Case, baseName?: string) =>
    `  ${label.padEnd(56)} median ${ms(c.medianMs).padStart(10)}  p90 ${ms(c.p90Ms).padStart(10)}  peak RSS +${mb(c.peakRssDeltaMb).padStart(8)}` +
    (base ? `   ${(c.medianMs / base.medianMs).toFixed(2)} x ${baseName}` : '');
  const pipelineOk = r.pipeline.bomb.medianMs < BOMB_BUDGET_MS;
  const httpExtra = r.http.bomb.medianMs - r.http.junk415.medianMs;
  const httpOk = httpExtra < BOMB_BUDGET_MS;
  return {
    ok: pipelineOk && httpOk,
    lines: [
      `  bomb: 20000×20000 1-bit PNG, ${(r.bombBytes / 1024).toFixed(0)} KB; pipeline ${r.pipeline.samples} samples, HTTP ${r.http.samples}`,
      line('pipeline: 16×16 PNG decoded (baseline)', r.pipeline.tinyDecode),
      `${line('pipeline: bomb refused', r.pipeline.bomb, r.pipeline.tinyDecode, 'baseline')}   < ${BOMB_BUDGET_MS} ms ${pipelineOk ? 'ok' : 'MISSED'}`,
      line(
        'pipeline: 1600×1200 JPEG to a 512×512 WebP avatar',
        r.pipeline.avatar,
        r.pipeline.tinyDecode,
        'baseline',
      ),
      line(
        'pipeline: bomb refused by sharp alone (no header check)',
        r.pipeline.sharpAloneBomb,
        r.pipeline.tinyDecode,
        'baseline',
      ),
      line('PUT /me/avatar: same-size non-image, 415 (baseline)', r.http.junk415),
      line('PUT /me/avatar: bomb, 400', r.http.bomb, r.http.junk415, 'baseline'),
      `    the bomb over the baseline: ${ms(httpExtra)}   < ${BOMB_BUDGET_MS} ms ${httpOk ? 'ok' : 'MISSED'}`,
      line('PUT /me/avatar: 1600×1200 JPEG, 200', r.http.avatar, r.http.junk415, 'baseline'),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { lines, ok } = describeImageBomb(await measureImageBomb());
  console.log(
    'Image bomb: refusal of a 20000×20000 PNG against decoding a 16×16 one, and an ordinary avatar',
  );
  console.log(lines.join('\n'));
  console.log(
    ok
      ? `target met: bomb refused in < ${BOMB_BUDGET_MS} ms`
      : `TARGET MISSED: bomb refusal over ${BOMB_BUDGET_MS} ms`,
  );
  if (!ok && !process.argv.includes('--no-fail')) process.exit(1);
}
