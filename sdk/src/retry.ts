// When to try a request again and how long to wait first. Pure apart from the injected `random` and
// `sleep`, so the whole policy is table-tested without a network or a real clock.

export interface RetryPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  retries: number;
  /** The backoff ceiling before jitter for the first retry; it doubles per retry. */
  baseDelayMs: number;
  /** The backoff ceiling never grows past this. */
  maxDelayMs: number;
  /** A server's Retry-After is honoured up to this; a longer one is waited for this long. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 2,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
};

/** Why an attempt did not produce an answer worth returning. */
export type AttemptFailure =
  | { kind: 'status'; status: number; retryAfterSeconds: number | null }
  | { kind: 'network' }
  | { kind: 'timeout' };

// RFC 9110 §9.2.2: repeating these has the same effect as sending them once. POST and PATCH are
// never repeated, even when the connection failed: the server may have acted before it broke; unless
// the request carries an Idempotency-Key, which makes a repeat answer the first answer (`keyed`).
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method.toUpperCase());
}

// 429 asks to slow down and 503 says "not now"; any other status is an answer that repeating will
// not change.
const RETRYABLE_STATUSES = new Set([429, 503]);

/**
 * The delay before the next attempt, or null to give up. `retriesDone` counts retries already made
 * (0 after the first attempt failed).
 */
export function retryDelayMs(input: {
  method: string;
  failure: AttemptFailure;
  retriesDone: number;
  policy: RetryPolicy;
  random: () => number;
  /**
   * The request carries an Idempotency-Key (a create or an operation start): the server answers a
   * repeat with the first answer, so it is retried like an idempotent method, and after any 5xx too
   * (a failed request left the key free; Stripe's pattern).
   */
  keyed?: boolean;
}): number | null {
  const { method, failure, retriesDone, policy, random } = input;
  const keyed = input.keyed === true;
  if (retriesDone >= policy.retries || !(keyed || isIdempotent(method))) return null;
  if (failure.kind === 'status') {
    if (!RETRYABLE_STATUSES.has(failure.status) && !(keyed && failure.status >= 500)) return null;
    if (failure.retryAfterSeconds !== null) {
      return Math.min(failure.retryAfterSeconds * 1000, policy.maxRetryAfterMs);
    }
  }
  // "Full jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter"): a uniform draw below
  // the exponential ceiling spreads clients that failed together, so they do not return together.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesDone);
  return Math.floor(random() * ceiling);
}

/**
 * Retry-After (RFC 9110 §10.2.3) as whole seconds from `now`: either delay-seconds or an HTTP-date.
 * Null when absent or unreadable, so a garbled header falls back to backoff instead of failing.
 */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // All three HTTP-date forms start with a day name; without this check Date.parse would read
  // "-5" or "1.5" as a year.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

export type AttemptResult<T> = { ok: true; value: T } | { ok: false; error: Error; failure: AttemptFailure };

export interface RetryDeps {
  random: () => number;
  /** Rejects with the signal's reason when it aborts, so a caller's abort also ends the wait. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Runs `attempt` until it succeeds or the policy gives up; throws the last failure's error. */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<AttemptResult<T>>,
  options: { method: string; keyed?: boolean; policy: RetryPolicy; signal?: AbortSignal | undefined } & RetryDeps,
): Promise<T> {
  for (let retriesDone = 0; ; retriesDone++) {
    const result = await attempt(retriesDone + 1);
    if (result.ok) return result.value;
    const delay = retryDelayMs({
      method: options.method,
      keyed: options.keyed,
      failure: result.failure,
      retriesDone,
      policy: options.policy,
      random: options.random,
    });
    if (delay === null) throw result.error;
    await options.sleep(delay, options.signal);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
