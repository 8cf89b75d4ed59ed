// `svcctl api`: sends one request through the SDK's raw (openapi-fetch) client, so authentication
// and User-Agent are the same as for generated commands, and turns failures into the SDK's error
// types so they print and exit like every other command's.
import { SvcApiError, SvcNetworkError, SvcTimeoutError, type ValidationIssue } from '@svcplatform/sdk';
import type { Command } from 'commander';
import { readData } from './data-source.js';
import { UsageError } from './errors.js';
import { collectGlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { resolveSettings } from './settings.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const TIMEOUT_MS = 30_000;

export interface ApiRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
}

/** Validates and splits the command line: `GET /x?a=1 --query b=2` → path /x, query {a, b}. */
export function parseApiRequest(
  method: string,
  rawPath: string,
  queryArgs: readonly string[],
  headerArgs: readonly string[],
): ApiRequest {
  const upper = method.toUpperCase();
  if (!METHODS.has(upper))
    throw new UsageError(`unknown method "${method}"; use one of ${[...METHODS].join(', ')}`);
  if (!rawPath.startsWith('/'))
    throw new UsageError(`path must start with "/" (relative to /api/v2); got "${rawPath}"`);
  const [pathPart = '', search = ''] = rawPath.split(/\?(.*)/s, 2);
  // A path copied from a full URL still works.
  const path = pathPart.replace(/^\/api\/v2(?=\/|$)/, '') || '/';
  const query: Record<string, string | string[]> = {};
  const add = (k: string, v: string) => {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  };
  for (const [k, v] of new URLSearchParams(search)) add(k, v);
  for (const arg of queryArgs) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`--query expects key=value; got "${arg}"`);
    add(arg.slice(0, eq), arg.slice(eq + 1));
  }
  const headers: Record<string, string> = {};
  for (const arg of headerArgs) {
    const eq = arg.search(/[=:]/);
    if (eq <= 0) throw new UsageError(`--header expects name=value; got "${arg}"`);
    headers[arg.slice(0, eq).trim()] = arg.slice(eq + 1).trim();
  }
  return { method: upper, path, query, headers };
}

export async function runApi(cmd: Command, method: string, rawPath: string): Promise<void> {
  const opts = cmd.opts<{ data?: string; query?: string[]; header?: string[]; output?: string }>();
  const request = parseApiRequest(method, rawPath, opts.query ?? [], opts.header ?? []);
  const settings = await resolveSettings(collectGlobalFlags(cmd));
  const body = opts.data === undefined ? undefined : await readData(opts.data);
  const client = await openClient(settings);
  const url = `${client.baseUrl}${request.path}`;
  let result: { data?: unknown; error?: unknown; response: Response };
  try {
    result = await client.raw.request(
      request.method.toLowerCase() as 'get',
      request.path as never,
      {
        params: { query: request.query },
        body,
        headers: request.headers,
        parseAs: 'arrayBuffer',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      } as never,
    );
  } catch (err) {
    if (err instanceof DOMException && err.name === 'TimeoutError')
      throw new SvcTimeoutError(request.method, url, TIMEOUT_MS);
    throw new SvcNetworkError(request.method, url, err);
  }
  const { response } = result;
  if (!response.ok) throw problemError(response, result.error);
  await writeResult(decode(result.data, response), settings, { file: opts.output });
}

/** JSON becomes a value, text a string, anything else stays bytes. */
function decode(data: unknown, response: Response): unknown {
  if (!(data instanceof ArrayBuffer)) return undefined;
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  const bytes = new Uint8Array(data);
  if (/^application\/(.+\+)?json\b/i.test(contentType)) {
    const text = new TextDecoder().decode(bytes);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
  if (/^text\//i.test(contentType)) return new TextDecoder().decode(bytes);
  return { bytes, contentType };
}

// TODO(sdk): the SDK builds the same error in its internal problem.ts; use it once the SDK exports
// it (asked for in the CLI issue notes), so both paths read problems identically.
function problemError(response: Response, body: unknown): SvcApiError {
  const p =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const retry = response.headers.get('retry-after');
  return new SvcApiError({
    status: response.status,
    code: str(p.code) ?? 'unknown-error',
    title: str(p.title) ?? (response.statusText || `HTTP ${response.status}`),
    detail: str(p.detail) ?? (typeof body === 'string' ? body.trim().slice(0, 200) : ''),
    requestId: str(p.request_id) ?? response.headers.get('x-request-id'),
    errors: Array.isArray(p.errors) ? (p.errors as ValidationIssue[]) : [],
    details:
      typeof p.details === 'string' || (typeof p.details === 'object' && p.details !== null)
        ? (p.details as string | Record<string, unknown>)
        : null,
    retryAfter: retry && /^\d+$/.test(retry) ? Number(retry) : null,
    problem: body,
    operationId: null,
  });
}
