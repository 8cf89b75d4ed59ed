// One operation call, driven by its entry in the generated index: build the request, run the
// attempts under the retry policy, and turn the answer into a value or a typed error.
import type { Client } from 'openapi-fetch';
import { bodyEncoding } from './body.js';
import { SvcNetworkError, SvcTimeoutError, isSvcNetworkError, isSvcTimeoutError } from './errors.js';
import type { paths } from './generated/api.js';
import { operations, type OperationIndexEntry } from './generated/operations.js';
import type { BinaryBody, LooseParams, RequestOptions } from './operation-types.js';
import { apiErrorFromResponse } from './problem.js';
import { DEFAULT_RETRY_POLICY, withRetries, type AttemptResult, type RetryDeps } from './retry.js';

export interface CallContext extends RetryDeps {
  raw: Client<paths>;
  fetch: (request: Request) => Promise<Response>;
  retries: number;
  timeoutMs: number;
}

type Entry = OperationIndexEntry;

export async function callOperation(
  ctx: CallContext,
  operationId: string,
  params: LooseParams = {},
  options: RequestOptions = {},
): Promise<unknown> {
  const op = findOperation(operationId);
  checkPathParams(op, params);
  const method = op.method.toUpperCase();
  const timeoutMs = options.timeoutMs ?? ctx.timeoutMs;
  const policy = { ...DEFAULT_RETRY_POLICY, retries: options.retries ?? ctx.retries };
  const keyedParams = withIdempotencyKey(op, params);
  return withRetries(() => attempt(ctx, op, keyedParams ?? params, timeoutMs, options.signal), {
    method,
    keyed: keyedParams !== null,
    policy,
    signal: options.signal,
    random: ctx.random,
    sleep: ctx.sleep,
  });
}

const IDEMPOTENCY_KEY = 'Idempotency-Key';

/**
 * An operation that takes `Idempotency-Key` (every create and every operation start) gets one: the
 * caller's, or a fresh one made here, the same for every attempt of this call. Null for the others.
 */
function withIdempotencyKey(op: Entry, params: LooseParams): LooseParams | null {
  if (!op.parameters.some((p) => p.in === 'header' && p.name === IDEMPOTENCY_KEY)) return null;
  const given = (params.header as Record<string, unknown> | undefined)?.[IDEMPOTENCY_KEY];
  if (given !== undefined) return params;
  const own = Object.keys(params.headers ?? {}).some((h) => h.toLowerCase() === 'idempotency-key');
  if (own) return params;
  return { ...params, header: { ...(params.header as object | undefined), [IDEMPOTENCY_KEY]: globalThis.crypto.randomUUID() } };
}

function findOperation(operationId: string): Entry {
  const index: Record<string, Entry> = operations;
  if (!Object.hasOwn(index, operationId))
    throw new TypeError(`Unknown operation ${JSON.stringify(operationId)}`);
  return index[operationId]!;
}

// openapi-fetch would leave `{hostname}` in the URL and the server would answer a confusing 404;
// a loosely typed caller (svcctl) deserves the real reason.
function checkPathParams(op: Entry, params: LooseParams): void {
  for (const p of op.parameters) {
    if (p.in === 'path' && params.path?.[p.name] === undefined) {
      throw new TypeError(`${op.operationId} needs the path parameter "${p.name}"`);
    }
  }
}

async function attempt(
  ctx: CallContext,
  op: Entry,
  params: LooseParams,
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<AttemptResult<unknown>> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const signal = callerSignal ? AbortSignal.any([timeout.signal, callerSignal]) : timeout.signal;
  const encoding = op.body ? bodyEncoding(op.body.contentType) : {};
  // The caller's own Content-Type (a concrete image type for a `*/*` upload) wins over the spec's.
  const headers = {
    ...(encoding.contentType ? { 'Content-Type': encoding.contentType } : {}),
    ...params.headers,
  };
  try {
    // The casts: `op` is any entry of the index, so openapi-fetch's per-path types cannot apply
    // here. The exact types are enforced one level up, on the generated methods' signatures.
    const { data, error, response } = await ctx.raw.request(
      op.method,
      op.path as never,
      {
        params: { path: params.path, query: params.query, header: params.header },
        body: params.body,
        headers,
        signal,
        parseAs: isBinary(op) ? 'arrayBuffer' : 'json',
        ...(encoding.bodySerializer ? { bodySerializer: encoding.bodySerializer } : {}),
        fetch: (request: Request) =>
          transport(ctx.fetch, request, { timeout: timeout.signal, timeoutMs, callerSignal }),
      } as never,
    );
    // A 304 answers a conditional GET (If-None-Match) of a binary operation: a result, not a failure.
    if (response.ok || (response.status === 304 && isBinary(op))) {
      return { ok: true, value: toResult(op, data, response) };
    }
    const err = apiErrorFromResponse(response, error, op.operationId);
    return {
      ok: false,
      error: err,
      failure: { kind: 'status', status: response.status, retryAfterSeconds: err.retryAfter },
    };
  } catch (e) {
    if (isSvcTimeoutError(e)) return { ok: false, error: e, failure: { kind: 'timeout' } };
    if (isSvcNetworkError(e)) return { ok: false, error: e, failure: { kind: 'network' } };
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends the request and reads the whole body inside one guard, so every network failure (connect,
 * reset mid-body, the timeout firing while bytes trickle in) is classified here, and nothing else
 * (a bad token source, unparseable JSON) is mistaken for one and retried.
 */
async function transport(
  fetch: (request: Request) => Promise<Response>,
  request: Request,
  signals: { timeout: AbortSignal; timeoutMs: number; callerSignal: AbortSignal | undefined },
): Promise<Response> {
  try {
    const response = await fetch(request);
    const bytes = await response.arrayBuffer();
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  } catch (cause) {
    // The caller's abort is theirs to handle: rethrow its reason, as fetch itself does.
    if (signals.callerSignal?.aborted) throw signals.callerSignal.reason;
    if (signals.timeout.aborted) throw new SvcTimeoutError(request.method, request.url, signals.timeoutMs);
    throw new SvcNetworkError(request.method, request.url, cause);
  }
}

// Fetch's Response constructor refuses a body for these (Fetch Standard, "null body status").
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function isBinary(op: Entry): boolean {
  return op.responseType !== null && !/^application\/(.+\+)?json$/.test(op.responseType);
}

function toResult(op: Entry, data: unknown, response: Response): unknown {
  if (op.responseType === null) return undefined;
  if (!isBinary(op)) return data;
  const notModified = response.status === 304;
  const result: BinaryBody = {
    bytes: !notModified && data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(0),
    contentType: response.headers.get('content-type') ?? op.responseType,
    etag: response.headers.get('etag'),
    notModified,
  };
  return result;
}
