// Positionals, flag values and --data → the SDK's request parameters. Explicit flags override the
// same fields of --data, so a saved body can be reused with one field changed.
import { UsageError } from './errors.js';
import { argumentName, pathParameters, type CliOperation } from './operation.js';
import type { FlagInput } from './operation-inputs.js';

export interface RequestParams {
  path: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body?: unknown;
}

export function buildRequest(
  op: CliOperation,
  positionals: readonly string[],
  values: readonly { input: FlagInput; value: unknown }[],
  data: unknown,
): RequestParams {
  const path: Record<string, string> = {};
  for (const [i, p] of pathParameters(op).entries()) {
    const value = positionals[i];
    if (value === undefined) throw new UsageError(`missing required argument '${argumentName(op, p)}'`);
    path[p.name] = value;
  }
  const query: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  const fields: Record<string, unknown> = {};
  for (const { input, value } of values) {
    if (value === undefined) continue;
    if (input.location === 'query') query[input.name] = value;
    else if (input.location === 'header') headers[input.name] = String(value);
    else fields[input.name] = value;
  }
  const request: RequestParams = { path, query, headers };
  if (!op.body) return request;

  const hasFields = Object.keys(fields).length > 0;
  if (data !== undefined && !isPlainObject(data)) {
    if (hasFields) throw new UsageError('--data must be a JSON object when combined with body field flags');
    // Not an object: the server's validation answers, with its own pointer and message.
    request.body = data;
    return request;
  }
  if (data === undefined && !hasFields && !op.body.required) return request;
  const body = { ...(data as Record<string, unknown> | undefined), ...fields };
  const inputsByName = new Map(values.map(({ input }) => [input.name, input]));
  const missing = op.body.fields.filter((f) => f.required && !(f.name in body));
  if (missing.length > 0) {
    const names = missing.map((f) => `${inputsByName.get(f.name)?.flag ?? f.name} (${f.name})`);
    throw new UsageError(
      `missing required body field${missing.length > 1 ? 's' : ''}: ${names.join(', ')}; give the flag or include it in --data`,
    );
  }
  request.body = body;
  return request;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
