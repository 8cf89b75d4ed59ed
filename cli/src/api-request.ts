// `svcctl api METHOD PATH ...`: the command line checked and split into a request.
import { UsageError } from './errors.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

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
