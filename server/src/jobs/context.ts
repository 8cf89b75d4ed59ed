// What a task gets besides its payload: the process's dependencies, like a request handler's Deps,
// and the job it runs as.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import type { Clock } from '../clock.js';
import type { MailSender } from '../mail/transport.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SubstrateDriver } from '../substrate/driver.js';

export interface TaskContext {
  /** The worker's connections; a task opens its own transactions (`ctx.sql.begin`). */
  sql: Sql;
  config: Config;
  log: Logger;
  /**
   * The app's clock: what a task decides (what is due, expired, stale) it decides by this clock. When a
   * job runs is the queue's business, on the database's clock; tests freeze this one and run due
   * jobs at will (Worker.runDue).
   */
  clock: Clock;
  box: SecretBox;
  /** The worker's mail transport, open while the worker runs. */
  mail: MailSender;
  /** The hosting substrate the worker's operations act on (SUBSTRATE). */
  substrate: SubstrateDriver;
  /**
   * Aborted when the worker begins to stop: a task that only waits (the sampler between its slots) ends
   * at once instead of holding the stop for its whole wait.
   */
  stopping: AbortSignal;
  job: {
    id: string;
    /** This run counted: 1 on the first run. */
    attempts: number;
    maxAttempts: number;
    key: string | null;
  };
}
