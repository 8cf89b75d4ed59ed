// Everything the SDK throws on a failed call is an SvcError, so one catch and one guard cover it.
// The guards read a brand instead of relying on instanceof alone: two copies of the SDK in one
// process (a CLI plugin bundling its own) would otherwise fail each other's instanceof checks.
import type { components } from './generated/api.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ValidationIssue = components['schemas']['ValidationIssue'];
export type Problem = components['schemas']['Problem'];

/**
 * The spec's codes, `unknown-error` for answers that are not problem details, and any other string:
 * the spec says new codes may be added, and an older SDK must still surface them.
 */
export type SvcErrorCode = ErrorCode | 'unknown-error' | (string & {});

export type SvcErrorKind = 'api' | 'network' | 'timeout';

const BRAND = Symbol.for('@svcplatform/sdk/error');

export abstract class SvcError extends Error {
  abstract readonly kind: SvcErrorKind;
  readonly [BRAND] = true;
}

export interface SvcApiErrorInit {
  status: number;
  code: SvcErrorCode;
  title: string;
  detail: string;
  requestId: string | null;
  errors: readonly ValidationIssue[];
  details: string | Record<string, unknown> | null;
  retryAfter: number | null;
  /** The parsed body as received: a Problem, other JSON, text, or undefined when empty. */
  problem: unknown;
  operationId: string | null;
}

/** The server answered with a non-2xx status. */
export class SvcApiError extends SvcError {
  readonly kind = 'api';
  readonly status: number;
  readonly code: SvcErrorCode;
  readonly title: string;
  readonly detail: string;
  /** Quote this to support; it is the response's X-Request-Id. */
  readonly requestId: string | null;
  /** One entry per validation failure (400 `invalid-request`); empty otherwise. */
  readonly errors: readonly ValidationIssue[];
  /** A sub-reason such as `subdomain_taken`, or context such as `{ limit: 5 }`. */
  readonly details: string | Record<string, unknown> | null;
  /** Seconds from the Retry-After header (429, 503), or null. */
  readonly retryAfter: number | null;
  readonly problem: unknown;
  readonly operationId: string | null;

  constructor(init: SvcApiErrorInit) {
    const summary = init.detail || init.title;
    const where = init.requestId ? `, request id ${init.requestId}` : '';
    super(`${summary} (HTTP ${init.status} ${init.code}${where})`);
    this.name = 'SvcApiError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.requestId = init.requestId;
    this.errors = init.errors;
    this.details = init.details;
    this.retryAfter = init.retryAfter;
    this.problem = init.problem;
    this.operationId = init.operationId;
  }
}

/** The request never got an answer: refused connection, DNS failure, reset, TLS failure. */
export class SvcNetworkError extends SvcError {
  readonly kind = 'network';
  readonly method: string;
  readonly url: string;

  constructor(method: string, url: string, cause: unknown) {
    super(`${method} ${url} failed: ${describeCause(cause)}`, { cause });
    this.name = 'SvcNetworkError';
    this.method = method;
    this.url = url;
  }
}

/** An attempt took longer than `timeoutMs` (the clock restarts for each retry). */
export class SvcTimeoutError extends SvcError {
  readonly kind = 'timeout';
  readonly method: string;
  readonly url: string;
  readonly timeoutMs: number;

  constructor(method: string, url: string, timeoutMs: number) {
    super(`${method} ${url} got no answer within ${timeoutMs} ms`);
    this.name = 'SvcTimeoutError';
    this.method = method;
    this.url = url;
    this.timeoutMs = timeoutMs;
  }
}

export function isSvcError(value: unknown): value is SvcError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** With `code`, also checks the problem's code: `if (isSvcApiError(e, 'not-found')) ...`. */
export function isSvcApiError(value: unknown, code?: SvcErrorCode): value is SvcApiError {
  return (
    isSvcError(value) && value.kind === 'api' && (code === undefined || (value as SvcApiError).code === code)
  );
}

export function isSvcNetworkError(value: unknown): value is SvcNetworkError {
  return isSvcError(value) && value.kind === 'network';
}

export function isSvcTimeoutError(value: unknown): value is SvcTimeoutError {
  return isSvcError(value) && value.kind === 'timeout';
}

// undici reports every failure as TypeError("fetch failed") and keeps the useful part
// ("connect ECONNREFUSED 127.0.0.1:9") in `cause`.
function describeCause(cause: unknown): string {
  let current: unknown = cause;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
