// When to try a failed mail again, when to stop, and what to write down about the failure. Pure.

/** Attempts before a mail is given up: with RETRY_BASE_MS doubling, the last one is ~1 hour in. */
export const MAX_ATTEMPTS = 8;
export const RETRY_BASE_MS = 30_000;
const RETRY_CAP_MS = 30 * 60_000;

/** The wait after failed attempt number `attempt` (1-based): 30 s, 1 min, 2 min, ... capped at 30 min. */
export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1), RETRY_CAP_MS);
}

export interface FailureOutcome {
  giveUp: boolean;
  /** For the row's last_error: short, one line, no credentials. */
  error: string;
}

/**
 * Decides what a failed delivery means. A recipient the server refuses for good (a 5xx reply to
 * RCPT TO; RFC 5321 §4.2.1) will be refused again, so that mail stops at once; every other failure
 * (connection, TLS, authentication, a 4xx) may heal, and is retried until MAX_ATTEMPTS.
 * `secrets` are strings that must not reach the row even if a library echoes them (the SMTP password).
 */
export function classifyFailure(err: unknown, attempt: number, secrets: string[]): FailureOutcome {
  const e = (err ?? {}) as {
    code?: unknown;
    responseCode?: unknown;
    command?: unknown;
    permanent?: unknown;
    message?: unknown;
  };
  const recipientRefused =
    e.permanent === true && typeof e.command === 'string' && /^RCPT\b/i.test(e.command.trim());
  return { giveUp: recipientRefused || attempt >= MAX_ATTEMPTS, error: shortError(err, secrets) };
}

export function shortError(err: unknown, secrets: string[]): string {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? `${e.code}: ` : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  let text = `${code}${message}`.replace(/\s+/g, ' ').trim();
  for (const secret of secrets) {
    if (secret.length >= 3) text = text.split(secret).join('***');
  }
  // Credentials embedded in any URL the message mentions.
  text = text.replace(/(\w+:\/\/)[^\s/@]*@/g, '$1***@');
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}
