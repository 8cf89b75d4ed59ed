import postgres from 'postgres';

export type Sql = postgres.Sql;
/** A connection or a transaction: store functions take either as their first argument. */
export type Db = postgres.Sql | postgres.TransactionSql;

export function connect(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // Our own timestamps are instants; keep them as Date and format at the mapper.
    types: {},
    connection: { application_name: 'svc-control-plane' },
  });
}

/** PostgreSQL's SQLSTATE for a unique violation, mapped by callers into API refusals. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}
