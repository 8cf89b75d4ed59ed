// Turns any non-2xx answer into an SvcApiError. The server always sends RFC 9457 problem details
// (DECISIONS.md §2), but a proxy in front of it may answer with HTML or plain text, and that must
// still become a typed error instead of a crash in the error path.
import { SvcApiError, type ValidationIssue } from './errors.js';
import { parseRetryAfter } from './retry.js';

const DETAIL_FROM_TEXT_MAX = 200;

export function apiErrorFromResponse(
  response: Response,
  body: unknown,
  operationId: string | null,
): SvcApiError {
  const headerRequestId = response.headers.get('x-request-id');
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), new Date());
  const problem = asRecord(body);
  if (problem && typeof problem.code === 'string') {
    return new SvcApiError({
      status: response.status,
      code: problem.code,
      title: stringOr(problem.title, response.statusText),
      detail: stringOr(problem.detail, ''),
      requestId: typeof problem.request_id === 'string' ? problem.request_id : headerRequestId,
      errors: Array.isArray(problem.errors) ? (problem.errors as ValidationIssue[]) : [],
      details: typeof problem.details === 'string' ? problem.details : asRecord(problem.details),
      retryAfter,
      problem: body,
      operationId,
    });
  }
  return new SvcApiError({
    status: response.status,
    code: 'unknown-error',
    title: response.statusText || `HTTP ${response.status}`,
    detail: typeof body === 'string' ? body.trim().slice(0, DETAIL_FROM_TEXT_MAX) : '',
    requestId: headerRequestId,
    errors: [],
    details: null,
    retryAfter,
    problem: body,
    operationId,
  });
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
