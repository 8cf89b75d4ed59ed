// The shape of one entry of the generated operation index, as svcctl reads it. Structural on
// purpose: the index is `as const` literal types, and svcctl only needs these fields.

export type ParameterLocation = 'path' | 'query' | 'header';

export interface CliParameter {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly required: boolean;
  /** `string`, `integer`, `boolean`, `uuid`, `date-time`, `object`, `a|b|c` (enum), `T[]`, ... */
  readonly type: string;
  readonly description: string;
  /** Not emitted by the generator yet; honoured when it is, so `null` can be sent for strings. */
  readonly nullable?: boolean;
}

export interface CliBodyField {
  readonly name: string;
  readonly required: boolean;
  readonly type: string;
  readonly description: string;
  readonly nullable?: boolean;
}

export interface CliOperation {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly security: readonly string[];
  readonly capability: string | null;
  readonly cli: readonly string[];
  readonly parameters: readonly CliParameter[];
  readonly body: {
    readonly required: boolean;
    readonly contentType: string;
    readonly fields: readonly CliBodyField[];
  } | null;
  readonly successStatus: number;
  readonly responseType: string | null;
}

/** JSON answers are rendered; anything else (images, archives) is written out as bytes. */
export function isBinaryResponse(op: CliOperation): boolean {
  return op.responseType !== null && !/^application\/(.+\+)?json$/.test(op.responseType);
}

/** Path parameters in the order they appear in the path, which is the order of the positionals. */
export function pathParameters(op: CliOperation): CliParameter[] {
  const order = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  return op.parameters
    .filter((p) => p.in === 'path')
    .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}

/**
 * A paged list (DECISIONS.md §1): a GET taking the query parameter `page` and answering JSON (`{ data,
 * meta }`). Its command takes `--all`, which walks every page through the SDK's paginator.
 */
export function isPagedOperation(op: CliOperation): boolean {
  return (
    op.method === 'get' &&
    op.responseType === 'application/json' &&
    op.parameters.some((p) => p.in === 'query' && p.name === 'page')
  );
}
