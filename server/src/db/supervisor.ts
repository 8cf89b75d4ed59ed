// The embedded PostgreSQL under supervision (DECISIONS.md §6 "Database faults"): its exit is noticed
// at once and it is started again on the same DATA_DIR, port and password, so the pools reconnect by
// themselves; after a bounded number of failed starts the server gives up (the caller exits non-zero),
// never leaving a process of its DATA_DIR behind.
import type { Logger } from 'pino';
import { startEmbeddedPostgres, type EmbeddedDatabase, type PostmasterExit } from './embedded.js';

/** Attempts to start a postmaster that exited, with these waits before each (a crashed cluster's
 * backends take a moment to notice their postmaster is gone and release its shared memory). */
const RESTART_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000];

export interface SupervisedDatabase {
  url: string;
  /** Stops supervising, then stops the cluster (prompt when it is already gone). */
  stop(): Promise<void>;
}

export async function superviseEmbeddedPostgres(options: {
  dir: string;
  log: Logger;
  /** Called once when the cluster exited and could not be started again. */
  onGiveUp: (err: Error) => void;
  /** Tests: other waits between attempts. */
  restartDelaysMs?: readonly number[];
}): Promise<SupervisedDatabase> {
  const { log } = options;
  const delays = options.restartDelaysMs ?? RESTART_DELAYS_MS;
  const db: EmbeddedDatabase = await startEmbeddedPostgres({
    dir: options.dir,
    persistent: true,
    onLog: (line) => {
      // PostgreSQL's own account of a crash or a refused start is worth a warning; the rest is debug.
      if (/\b(FATAL|PANIC):/.test(line)) log.warn({ postgres: line }, 'postgres');
      else log.debug({ postgres: line }, 'postgres');
    },
  });
  let stopping = false;
  let restarting: Promise<void> | null = null;

  const restart = async (exit: PostmasterExit): Promise<void> => {
    log.error({ pid_exit: exit, data_dir: options.dir }, 'embedded PostgreSQL exited; starting it again');
    let last: unknown;
    for (const [attempt, delay] of delays.entries()) {
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (stopping) return;
      try {
        await db.restart();
        log.info({ pid: db.pid, attempt: attempt + 1 }, 'embedded PostgreSQL started again');
        watch();
        return;
      } catch (err) {
        last = err;
        log.warn({ attempt: attempt + 1, error: err instanceof Error ? err.message : String(err) }, 'embedded PostgreSQL did not start');
      }
    }
    options.onGiveUp(
      new Error(
        `the embedded PostgreSQL exited and could not be started again after ${delays.length} attempts${last instanceof Error ? `: ${last.message}` : ''}`,
      ),
    );
  };

  const watch = () => {
    void db.exited.then((exit) => {
      if (!stopping) restarting = restart(exit).finally(() => (restarting = null));
    });
  };
  watch();

  return {
    url: db.url,
    async stop() {
      stopping = true;
      // A start under way finishes first, so that the cluster it starts is the one stopped.
      await restarting;
      await db.stop();
    },
  };
}
