import type { Db } from '../db/client.js';

/**
 * Counts one hit in a key's current window and returns the window's and the previous window's count.
 * The bucket matters until the window after this one is over (the sliding estimate reads the previous
 * window), which is when the pruning job (jobs/prune.ts) may delete it.
 */
export async function hitBucket(
  db: Db,
  key: string,
  windowStart: Date,
  windowSeconds: number,
): Promise<{ count: number; prevCount: number }> {
  const [row] = await db<{ count: number; prev_count: number }[]>`
    insert into rate_limit_buckets as b (key, window_start, count, prev_count, expires_at)
    values (${key}, ${windowStart}, 1, 0, ${windowStart}::timestamptz + make_interval(secs => ${2 * windowSeconds}))
    on conflict (key) do update set
      prev_count = case
        when b.window_start = excluded.window_start then b.prev_count
        when b.window_start = excluded.window_start - make_interval(secs => ${windowSeconds}) then b.count
        else 0 end,
      count = case when b.window_start = excluded.window_start then b.count + 1 else 1 end,
      window_start = excluded.window_start,
      expires_at = excluded.expires_at
    returning count, prev_count`;
  return { count: row!.count, prevCount: row!.prev_count };
}

export async function clearBucket(db: Db, key: string): Promise<void> {
  await db`delete from rate_limit_buckets where key = ${key}`;
}
