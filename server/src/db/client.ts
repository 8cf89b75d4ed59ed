// Every pool of postgres.js connections is made here, so every one gets the same guards: the driver's
// closed-socket fixes (patches/postgres+3.4.9.patch) and, when a timeout is given, bounded waits.
import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
/** A connection or a transaction: store functions take either as their first argument. */
export type Db = postgres.Sql | postgres.TransactionSql;

export interface ConnectOptions {
  max?: number;
  /**
   * DB_TIMEOUT_MS: the longest any step waits on the database: opening a connection, waiting for a
   * free one in the pool, and silence from the server while a query is out (a paused or partitioned
   * server). Each fails with an error that `isDatabaseUnavailable` recognises. Null: unbounded (the
   * admin scripts and migrations, whose statements may legitimately run long).
   */
  timeoutMs?: number | null;
  /**
   * PostgreSQL's own statement_timeout, for a pool whose queries may run longer than `timeoutMs`
   * (the job worker's). Default `timeoutMs`.
   */
  statementTimeoutMs?: number;
  /** application_name, as pg_stat_activity shows it. */
  name?: string;
  /**
   * Keep each connection (and its session: advisory locks, LISTEN) until it breaks: no idle or
   * lifetime retirement. Default false.
   */
  session?: boolean;
}

export function connect(url: string, options: ConnectOptions = {}): Sql {
  const timeoutMs = options.timeoutMs ?? null;
  const statementTimeoutMs = options.statementTimeoutMs ?? timeoutMs;
  const seconds = timeoutMs === null ? null : timeoutMs / 1000;
  return postgres(url, {
    max: options.max ?? 10,
    ...(options.session ? { idle_timeout: 0, max_lifetime: null } : {}),
    onnotice: () => {},
    // Our own timestamps are instants; keep them as Date and format at the mapper.
    types: {},
    connection: {
      application_name: options.name ?? 'svc-control-plane',
      // The server gives up on a statement (a lock wait included) a little before the client stops
      // listening, so a slow statement fails cleanly and its connection stays usable.
      ...(statementTimeoutMs === null ? {} : { statement_timeout: statementTimeoutMs }),
    },
    ...(seconds === null
      ? {}
      : {
          connect_timeout: seconds,
          // Options the patch adds (the driver's types do not know them).
          ...({
            acquire_timeout: seconds,
            // Silence longer than the server's own statement timeout, plus a margin: the server answers
            // first when it can.
            query_timeout: Math.max(seconds, (statementTimeoutMs ?? 0) / 1000) + 0.5,
          } as object),
        }),
  });
}

/** PostgreSQL's SQLSTATE for a unique violation, mapped by callers into API refusals. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}

// The driver's own codes (a lost, refused or timed-out connection) and the socket's.
const UNAVAILABLE_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'CONNECTION_TIMEOUT',
  'QUERY_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // SQLSTATEs: the server shutting down or restarting, a statement timeout, no connection slot left.
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '53300',
]);

/**
 * Whether `err` says the database could not be reached or did not answer in time (DECISIONS.md §2:
 * 503 `service-unavailable`), as opposed to a query the database refused.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  // Class 08: connection exceptions.
  return UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}
