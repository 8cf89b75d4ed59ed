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

/** Resource words that read better short in an argument's name (`ORG_ID`, `SERVICE_ID`). */
const SHORT_NAMES: Readonly<Record<string, string>> = {
  organization: 'org',
  'service-instance': 'service',
};

/**
 * What a path parameter is called in usage and errors: what it names, in capitals, as the READMEs write
 * it. `{id}` takes the name of the resource the path segment before it lists (`/organizations/{id}` →
 * `ORG_ID`, `/service-instances/{id}` → `SERVICE_ID`); `{user_id}` → `USER_ID`; `{hostname}` →
 * `HOSTNAME`. Derived from the route, so a route added later is named the same way.
 */
export function argumentName(op: Pick<CliOperation, 'path'>, param: Pick<CliParameter, 'name'>): string {
  let name = param.name;
  if (name === 'id') {
    const segment = new RegExp(`([^/{}]+)/\\{${param.name}\\}`).exec(op.path)?.[1];
    if (segment) name = `${singular(segment)}_id`;
  }
  const idOf = /^(.+)_id$/.exec(name)?.[1];
  if (idOf !== undefined) name = `${SHORT_NAMES[idOf] ?? idOf}_id`;
  return name.replace(/-/g, '_').toUpperCase();
}

function singular(word: string): string {
  return word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : /(ss|x|ch|sh)es$/.test(word)
      ? word.slice(0, -2)
      : word.endsWith('s') && !word.endsWith('ss')
        ? word.slice(0, -1)
        : word;
}
