// Sliding-window rate limits held in PostgreSQL, so every API process shares them. The estimate
// weights the previous fixed window by how much of it still overlaps the sliding window, which
// avoids the double burst a plain fixed window allows at its edge.
import type { Db } from '../db/client.js';
import { clearBucket, hitBucket } from './store.js';

export interface Limit {
  /** Bucket family, e.g. `client-errors:source`. */
  name: string;
  max: number;
  windowSeconds: number;
}

export interface LimitResult {
  allowed: boolean;
  retryAfterSeconds: number;
}

export async function hit(db: Db, limit: Limit, subject: string, now: Date): Promise<LimitResult> {
  const windowMs = limit.windowSeconds * 1000;
  const startMs = Math.floor(now.getTime() / windowMs) * windowMs;
  const { count, prevCount } = await hitBucket(db, `${limit.name}:${subject}`, new Date(startMs), limit.windowSeconds);
  const overlap = 1 - (now.getTime() - startMs) / windowMs;
  const estimate = prevCount * overlap + count;
  return {
    allowed: estimate <= limit.max,
    retryAfterSeconds: Math.max(1, Math.ceil((startMs + windowMs - now.getTime()) / 1000)),
  };
}

export function reset(db: Db, limit: Limit, subject: string): Promise<void> {
  return clearBucket(db, `${limit.name}:${subject}`);
}

/** Per-source limits the seeds leave open scale with SOURCE_RATE_LIMIT_SCALE; others never do. */
export function scaled(limit: Limit, scale: number): Limit {
  return { ...limit, max: Math.max(1, Math.round(limit.max * scale)) };
}
