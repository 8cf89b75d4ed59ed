// The background sender: delivers outbox rows (store.ts) through the configured transport. Woken by
// NOTIFY when a mail commits, so a sign-in code leaves within milliseconds; a slow poll picks up
// retries and anything a dropped LISTEN connection missed. Any number of API processes may run one
// on the same database: rows are leased with `for update skip locked`, so each mail goes to one sender.
//
// Delivery is at least once: a sender that dies after the SMTP server accepted a mail but before it
// recorded that leaves the row to be sent again when its lease runs out. For sign-in mail a rare
// duplicate is better than a lost code.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import { systemClock, type Clock } from '../http/handler.js';
import { classifyFailure, retryDelayMs, shortError } from './retry.js';
import {
  claimDueMails,
  giveUpMail,
  listenForMail,
  markMailSent,
  scheduleMailRetry,
  type ClaimedMailRow,
} from './store.js';
import { createMailTransport, defaultFromAddress } from './transport.js';

export interface MailerOptions {
  sql: Sql;
  config: Pick<Config, 'smtpUrl' | 'dataDir' | 'environment' | 'publicBaseUrl'>;
  log: Logger;
  /** Decides which rows are due; share the app's clock so mail queued by handlers is due for the sender. */
  clock?: Clock;
  /** How often to look for due retries when no NOTIFY arrives. */
  pollMs?: number;
  /** The From header; defaults to `Hosting Platform <no-reply@{host of PUBLIC_BASE_URL}>`. */
  from?: string;
}

export interface Mailer {
  /** Delivers every mail due now; resolves with how many this mailer delivered meanwhile. */
  flush(): Promise<number>;
  /** Stops waking, lets the batch in hand finish, closes the transport. */
  stop(): Promise<void>;
}

const DEFAULT_POLL_MS = 5_000;
/** Rows claimed per query, delivered concurrently. */
const BATCH_SIZE = 5;
/** Longer than one delivery can take under the SMTP timeouts (transport.ts). */
const LEASE_MS = 2 * 60_000;

/** Starts the sender; resolves once it listens for new mail, so nothing committed afterwards waits for a poll. */
export async function startMailer(options: MailerOptions): Promise<Mailer> {
  const { sql, config, log } = options;
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const from = options.from ?? defaultFromAddress(config.publicBaseUrl);
  const transport = await createMailTransport({ smtpUrl: config.smtpUrl, dataDir: config.dataDir });
  // DECISIONS.md §5: without SMTP_URL the sign-in code is logged, so a developer can sign in. Only in
  // development: test and production logs never carry a code or a link.
  const logCodes = transport.kind === 'file' && config.environment === 'development';

  let stopped = false;
  let delivered = 0;
  let woken = false;
  let interruptSleep: (() => void) | null = null;
  // One drain at a time per mailer: flush() waits for the loop's drain in progress instead of racing it.
  let exclusive: Promise<unknown> = Promise.resolve();

  const wake = () => {
    woken = true;
    interruptSleep?.();
  };

  const runExclusive = (fn: () => Promise<void>): Promise<void> => {
    const run = exclusive.then(fn);
    exclusive = run.catch(() => {});
    return run;
  };

  async function drain(): Promise<void> {
    while (!stopped) {
      const now = clock.now();
      const rows = await claimDueMails(sql, now, new Date(now.getTime() + LEASE_MS), BATCH_SIZE);
      if (rows.length === 0) return;
      // Settle the whole batch before reporting a failure, so no delivery outlives its drain.
      const results = await Promise.allSettled(rows.map(deliver));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  async function deliver(row: ClaimedMailRow): Promise<void> {
    let file: string | null;
    try {
      file = await transport.send({
        id: row.id,
        from,
        to: row.recipient,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        createdAt: row.created_at,
      });
    } catch (err) {
      await recordFailure(row, err);
      return;
    }
    await markMailSent(sql, row.id, clock.now());
    delivered += 1;
    if (logCodes) {
      log.info(
        {
          mail_id: row.id,
          kind: row.kind,
          to: row.recipient,
          file,
          ...(row.code !== null ? { code: row.code } : {}),
        },
        'mail written to outbox',
      );
    } else {
      log.info({ mail_id: row.id, kind: row.kind, attempts: row.attempts }, 'mail sent');
    }
  }

  async function recordFailure(row: ClaimedMailRow, err: unknown): Promise<void> {
    const outcome = classifyFailure(err, row.attempts, transport.secrets);
    const now = clock.now();
    const fields = { mail_id: row.id, kind: row.kind, attempts: row.attempts, error: outcome.error };
    if (outcome.giveUp) {
      await giveUpMail(sql, row.id, now, outcome.error);
      log.error(fields, 'mail given up');
    } else {
      const nextAttemptAt = new Date(now.getTime() + retryDelayMs(row.attempts));
      await scheduleMailRetry(sql, row.id, nextAttemptAt, outcome.error);
      log.warn(
        { ...fields, next_attempt_at: nextAttemptAt.toISOString() },
        'mail delivery failed; will retry',
      );
    }
  }

  const listener = await listenForMail(sql, wake);

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      try {
        await runExclusive(drain);
      } catch (err) {
        // Only the message: a database error object carries the query's parameters, here the bodies.
        log.error(
          { error: shortError(err, transport.secrets) },
          'mail sender failed; trying again at the next poll',
        );
      }
      if (stopped || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        interruptSleep = done;
        function done() {
          clearTimeout(timer);
          interruptSleep = null;
          resolve();
        }
      });
    }
  })();

  log.info({ transport: transport.kind, from }, 'mailer started');

  let stopping: Promise<void> | null = null;
  return {
    async flush() {
      if (stopped) throw new Error('the mailer is stopped');
      const before = delivered;
      await runExclusive(drain);
      return delivered - before;
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wake();
        await listener.unlisten().catch(() => {});
        await loop;
        transport.close();
      })();
      return stopping;
    },
  };
}
