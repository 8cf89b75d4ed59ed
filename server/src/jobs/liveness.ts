// Which workers are alive, so that the jobs of one that died (kill -9, a lost machine) run again at
// once instead of after graphile-worker's four-hour lock expiry.
//
// A worker pool holds a session advisory lock keyed by its pool id (the id graphile-worker writes
// into locked_by) on a connection of its own, taken before the pool asks for its first job. PostgreSQL
// drops a session's locks when its connection ends, and a killed process's connections end with it;
// so a pool whose key nobody holds is dead, and its jobs and named queues are unlocked for the living.
// Every worker checks at start and then every minute.
//
// Should the connection break while the process lives (the database restarted), the next check opens
// a new one and takes the locks again; until then the pool's jobs may run twice, which at-least-once
// delivery allows.
//
// The connection is a postgres.js instance of one connection that never retires it (max_lifetime
// off, so the session lasts). Any failure or a query that does not answer in time replaces the
// whole instance: after a connection reset postgres.js may leave later queries waiting forever, and a
// connection reserved from a shared pool whose backend died throws an uncaught TypeError when used.
import type { Logger } from 'pino';
import type postgres from 'postgres';
import { connect } from '../db/client.js';
import { findLockingPools, unlockPool, wakeWorkers } from './store.js';

/** First key of the two-key advisory locks of worker pools (db/migrate.ts uses one-key locks). */
const LIVENESS_LOCK_SPACE = 731_500;
const QUERY_TIMEOUT_MS = 5_000;

export interface Liveness {
  /** Marks `poolId` alive for as long as this process lives; retries until it can. */
  hold(poolId: string): Promise<void>;
  /** Unlocks the jobs of dead pools; resolves with how many jobs were unlocked. */
  recover(): Promise<number>;
  /** Lets go of every pool's lock (after the pools stopped) and closes the connection. */
  stop(): Promise<void>;
}

type Connection = postgres.Sql;

export async function startLiveness(databaseUrl: string, log: Logger): Promise<Liveness> {
  // The guarded connect every pool uses (db/client.ts), with the connect and answer bounds of this
  // connection's own query timeout.
  const open = (): Connection =>
    connect(databaseUrl, { max: 1, session: true, timeoutMs: QUERY_TIMEOUT_MS, name: 'svc-control-plane worker liveness' });
  let conn = open();

  /** Runs `fn` on the connection; a failure or a timeout replaces the connection (and its session). */
  const run = async <T>(fn: (c: Connection) => Promise<T>): Promise<T> => {
    const c = conn;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        fn(c),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error('the liveness connection did not answer')),
            QUERY_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (err) {
      if (conn === c) {
        conn = open();
        void c.end({ timeout: 0 }).catch(() => {});
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  const held = new Set<string>();
  const pending = new Map<string, Promise<void>>();
  /** The backend whose session holds the locks of `held`. */
  let lockedPid: number | null = null;
  let stopped = false;

  const lockAll = (ids: string[]): Promise<number> =>
    run(async (c) => {
      const [row] = await c<{ pid: number; ok: boolean }[]>`
        select pg_backend_pid() as pid,
               coalesce(bool_and(pg_try_advisory_lock(${LIVENESS_LOCK_SPACE}, hashtext(id))), true) as ok
        from unnest(${ids}::text[]) id`;
      // Taken by another session: two pool ids with one hash (about one in four billion). Never take
      // that for alive-by-us; refuse to run the pool instead.
      if (!row!.ok) throw new Error('a worker pool’s liveness lock is held by another session');
      return row!.pid;
    });

  const backendPid = () =>
    run(async (c) => {
      const [row] = await c<{ pid: number }[]>`select pg_backend_pid() as pid`;
      return row!.pid;
    });

  /** Takes the locks again if the session that held them is gone. */
  const ensure = async (): Promise<void> => {
    // A broken connection fails its query and is replaced; the second try is on the new one.
    const pid = await backendPid().catch(backendPid);
    if (pid === lockedPid || held.size === 0) return;
    if (lockedPid !== null) {
      log.warn({ pools: held.size }, 'job worker lost its liveness connection; locking again');
    }
    lockedPid = await lockAll([...held]);
  };

  // Connect now: a worker that can not reach its database fails at start, not at its first job.
  await ensure();

  return {
    hold(poolId) {
      let promise = pending.get(poolId);
      if (!promise) {
        promise = (async () => {
          for (let attempt = 0; ; attempt++) {
            if (stopped) throw new Error('the job worker is stopping');
            try {
              const pid = await lockAll([poolId]);
              held.add(poolId);
              if (lockedPid === null) lockedPid = pid;
              else if (pid !== lockedPid) await ensure(); // a new session: lock the others again
              return;
            } catch (err) {
              log.error(
                { error: err instanceof Error ? err.message : String(err), attempt },
                'job worker cannot mark itself alive; retrying',
              );
              await new Promise((r) => setTimeout(r, Math.min(30_000, 200 * 2 ** attempt)));
            }
          }
        })();
        pending.set(poolId, promise);
      }
      return promise;
    },

    async recover() {
      if (stopped) return 0;
      await ensure();
      const candidates = await run((c) => findLockingPools(c, [...held]));
      let unlocked = 0;
      for (const { pool, jobs } of candidates) {
        const free = await run(async (c) => {
          const [row] = await c<{ free: boolean }[]>`
            select pg_try_advisory_lock(${LIVENESS_LOCK_SPACE}, hashtext(${pool})) as free`;
          return row!.free;
        });
        if (!free) continue; // alive
        try {
          await run((c) => unlockPool(c, pool));
        } finally {
          await run((c) => c`select pg_advisory_unlock(${LIVENESS_LOCK_SPACE}, hashtext(${pool}))`);
        }
        unlocked += jobs;
        log.warn({ pool, jobs }, 'jobs of a job worker that died were unlocked');
      }
      if (unlocked > 0) await run((c) => wakeWorkers(c, unlocked));
      return unlocked;
    },

    async stop() {
      stopped = true;
      await Promise.allSettled(pending.values());
      await run((c) => c`select pg_advisory_unlock_all()`).catch(() => {});
      await conn.end({ timeout: 5 });
    },
  };
}
