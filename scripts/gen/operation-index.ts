// The operation index: one entry per operation of the bundled spec, in spec order. The server binds
// handlers from it, the SDK derives its per-operation methods from it and svcctl its command tree.
type Json = Record<string, unknown>;

export interface IndexedParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  type: string;
  description: string;
  /** Numeric bounds of the parameter's schema, when it has them (a page size's maximum). */
  minimum?: number;
  maximum?: number;
}

export interface IndexedBodyField {
  name: string;
  required: boolean;
  type: string;
  description: string;
  /** The field accepts JSON null. */
  nullable: boolean;
}

export interface IndexedOperation {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tags: string[];
  /** Names of the security schemes that may authenticate it; empty means public. */
  security: string[];
  /**
   * The caller kinds it accepts (`x-callers`): `anonymous`, `session`, `token` (a restricted personal
   * API token), `application`, `acting_as` (an application acting as a user). Empty when undeclared,
   * which test/authz/declarations.test.ts refuses.
   */
  callers: string[];
  /** The capability a token, an application or an acting-as request needs (`x-capability`), if any. */
  capability: string | null;
  /**
   * `x-capability-free: true`: a token or an acting-as request needs no capability at all (GET /me:
   * every caller may learn whose credential it is). Never together with `x-capability`.
   */
  capabilityFree: boolean;
  /**
   * Service-scoped (seed 001 §5): every refusal answers as an unknown id, a missing capability included.
   * Every path under /service-instances/ or /subscriptions/ is, and `x-service-scoped: true` makes
   * another one so; such a path cannot opt out.
   */
  serviceScoped: boolean;
  /** svcctl words: `x-svcctl`, else the operationId split at capitals. */
  cli: string[];
  parameters: IndexedParameter[];
  body: { required: boolean; contentType: string; fields: IndexedBodyField[] } | null;
  successStatus: number;
  /** The success answer's media type, null when it has no body. */
  responseType: string | null;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Paths whose every operation is service-scoped, whatever it declares. */
const SERVICE_SCOPED_PREFIXES = ['/service-instances/', '/subscriptions/'];

function serviceScopedOf(operationId: string, path: string, op: Json): boolean {
  const declared = op['x-service-scoped'];
  if (declared !== undefined && typeof declared !== 'boolean') {
    throw new Error(`${operationId}: x-service-scoped is true or false`);
  }
  const byPath = SERVICE_SCOPED_PREFIXES.some((prefix) => path.startsWith(prefix));
  if (byPath && declared === false) {
    throw new Error(`${operationId}: a path under ${SERVICE_SCOPED_PREFIXES.join(' or ')} is service-scoped`);
  }
  return byPath || declared === true;
}

function capabilityFreeOf(operationId: string, op: Json): boolean {
  const free = op['x-capability-free'];
  if (free !== undefined && typeof free !== 'boolean') throw new Error(`${operationId}: x-capability-free is true or false`);
  if (free === true && op['x-capability'] !== undefined) {
    throw new Error(`${operationId}: x-capability-free and x-capability exclude each other`);
  }
  return free === true;
}

function deref(spec: Json, node: unknown): Json {
  let cur = node as Json;
  for (let hops = 0; cur && typeof cur.$ref === 'string' && hops < 20; hops += 1) {
    const pointer = (cur.$ref as string).replace(/^#\//, '').split('/');
    cur = pointer.reduce<unknown>(
      (acc, key) => (acc as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
      spec,
    ) as Json;
  }
  return cur ?? {};
}

/** `oneOf`/`anyOf` of one schema and `null` (a nullable reference in OpenAPI 3.1) reads as that schema. */
function nonNullBranch(spec: Json, s: Json): Json {
  const branches = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
  if (!Array.isArray(branches)) return s;
  const rest = branches.map((b) => deref(spec, b)).filter((b) => b.type !== 'null');
  return rest.length === 1 ? rest[0]! : s;
}

function typeName(spec: Json, schema: unknown): string {
  const s = nonNullBranch(spec, deref(spec, schema));
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map(String).join('|');
  const t = Array.isArray(s.type) ? (s.type as string[]).filter((x) => x !== 'null')[0] : s.type;
  if (t === 'array') return `${typeName(spec, s.items)}[]`;
  if (typeof s.format === 'string' && s.format !== 'int32' && s.format !== 'int64') return s.format;
  return typeof t === 'string' ? t : 'json';
}

/** The whole description on one line, for --help. */
const oneLine = (d: unknown): string => String(d ?? '').replace(/\s+/g, ' ').trim();

function isNullable(spec: Json, schema: unknown): boolean {
  const s = deref(spec, schema);
  const branches = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.some((b) => deref(spec, b).type === 'null')) return true;
  return (Array.isArray(s.type) && s.type.includes('null')) || (Array.isArray(s.enum) && s.enum.includes(null));
}

function bounds(s: Json): { minimum?: number; maximum?: number } {
  return {
    ...(typeof s.minimum === 'number' ? { minimum: s.minimum } : {}),
    ...(typeof s.maximum === 'number' ? { maximum: s.maximum } : {}),
  };
}

export function cliWords(operationId: string, override: unknown): string[] {
  if (typeof override === 'string') return override.trim().split(/\s+/);
  return operationId.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
}

export function buildOperationIndex(spec: Json): IndexedOperation[] {
  const out: IndexedOperation[] = [];
  const globalSecurity = (spec.security as Json[] | undefined) ?? [];
  for (const [path, rawItem] of Object.entries((spec.paths as Json) ?? {})) {
    const item = deref(spec, rawItem);
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const operationId = String(op.operationId);
      const params = [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])]
        .map((p) => deref(spec, p))
        .filter((p) => p.in !== 'cookie');
      const security = ((op.security as Json[] | undefined) ?? globalSecurity).flatMap((req) => Object.keys(req));
      const reqBody = op.requestBody ? deref(spec, op.requestBody) : null;
      let body: IndexedOperation['body'] = null;
      if (reqBody) {
        const [contentType, media] = Object.entries((reqBody.content as Json) ?? {})[0] ?? ['application/json', {}];
        const schema = deref(spec, (media as Json).schema);
        const required = new Set((schema.required as string[]) ?? []);
        body = {
          required: reqBody.required === true,
          contentType,
          fields: Object.entries((schema.properties as Json) ?? {}).map(([name, prop]) => ({
            name,
            required: required.has(name),
            type: typeName(spec, prop),
            description: oneLine(deref(spec, prop).description),
            nullable: isNullable(spec, prop),
          })),
        };
      }
      const responses = (op.responses as Json) ?? {};
      const success = Object.keys(responses).find((s) => /^2\d\d$/.test(s)) ?? '200';
      const successContent = deref(spec, responses[success]).content as Json | undefined;
      out.push({
        operationId,
        method,
        path,
        summary: String(op.summary ?? ''),
        tags: (op.tags as string[]) ?? [],
        security,
        callers: Array.isArray(op['x-callers']) ? (op['x-callers'] as unknown[]).map(String) : [],
        capability: typeof op['x-capability'] === 'string' ? op['x-capability'] : null,
        capabilityFree: capabilityFreeOf(operationId, op),
        serviceScoped: serviceScopedOf(operationId, path, op),
        cli: cliWords(operationId, op['x-svcctl']),
        parameters: params.map((p) => ({
          name: String(p.name),
          in: p.in as IndexedParameter['in'],
          required: p.required === true,
          type: typeName(spec, p.schema),
          description: oneLine(p.description),
          ...bounds(deref(spec, p.schema)),
        })),
        body,
        successStatus: Number(success),
        responseType: successContent ? (Object.keys(successContent)[0] ?? null) : null,
      });
    }
  }
  return out;
}

export function renderOperationIndex(index: IndexedOperation[]): string {
  const ids = index.map((o) => JSON.stringify(o.operationId)).join(' | ');
  return [
    '',
    `export const operations = ${JSON.stringify(Object.fromEntries(index.map((o) => [o.operationId, o])), null, 2)} as const;`,
    '',
    `export type OperationId = ${ids || 'never'};`,
    '',
    'export type OperationIndexEntry = (typeof operations)[OperationId];',
    '',
  ].join('\n');
}
