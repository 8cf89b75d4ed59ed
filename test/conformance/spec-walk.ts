// Every operation of the bundled spec with its references resolved: what the conformance tests
// iterate, so a new operation in the spec is covered without new test code. Schemas keep their
// `$ref`s (a schema may be recursive); `resolveSchemaRef` follows them on demand.
import { readFileSync } from 'node:fs';
import type { Resolve, Schema } from './json-schema.js';
import { resolvePointer } from './json-pointer.js';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export type SecurityRequirement = Record<string, string[]>;
type Json = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  security?: SecurityRequirement[];
  paths: Record<string, Json>;
  components?: Json;
}

export interface WalkedParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface WalkedMedia {
  mediaType: string;
  schema: Schema | undefined;
}

export interface WalkedResponse {
  /** `200`, `4XX` or `default`, as the spec writes it. */
  status: string;
  media: WalkedMedia[];
}

export interface WalkedOperation {
  operationId: string;
  method: HttpMethod;
  /** The path template without the server prefix (`/public/assets/{id}`). */
  path: string;
  parameters: WalkedParameter[];
  requestBody: { required: boolean; media: WalkedMedia[] } | null;
  /** The `application/json` request body schema, when the operation takes one. */
  jsonBody: Schema | null;
  responses: WalkedResponse[];
  /** Effective security: the operation's own, else the document's default. */
  security: SecurityRequirement[];
  /** True when every way to call it needs a credential (no empty `{}` alternative). */
  requiresAuth: boolean;
}

export function loadSpec(): OpenApiDocument {
  return JSON.parse(
    readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'),
  ) as OpenApiDocument;
}

export function apiPrefix(doc: OpenApiDocument): string {
  return (doc.servers?.[0]?.url ?? '').replace(/\/+$/, '');
}

export function schemaResolver(doc: OpenApiDocument): Resolve {
  return (ref) => resolvePointer(doc, ref) as Schema;
}

/** Follows `$ref` on a non-schema object (parameter, request body, response) to its target. */
function deref(doc: OpenApiDocument, node: unknown): Json {
  let cur = node as Json;
  for (let hops = 0; typeof cur?.$ref === 'string'; hops += 1) {
    if (hops > 32) throw new Error(`reference cycle at ${String(cur.$ref)}`);
    cur = resolvePointer(doc, cur.$ref) as Json;
  }
  return cur;
}

function mediaOf(doc: OpenApiDocument, content: unknown): WalkedMedia[] {
  return Object.entries((content as Json | undefined) ?? {}).map(([mediaType, media]) => ({
    mediaType,
    schema: deref(doc, media).schema as Schema | undefined,
  }));
}

export function requiresAuth(security: SecurityRequirement[]): boolean {
  return security.length > 0 && security.every((req) => Object.keys(req).length > 0);
}

export function walkOperations(doc: OpenApiDocument): WalkedOperation[] {
  const out: WalkedOperation[] = [];
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const item = deref(doc, rawItem);
    for (const method of HTTP_METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      // Operation parameters override path-level ones with the same name and location.
      const byKey = new Map<string, WalkedParameter>();
      for (const raw of [
        ...((item.parameters as unknown[]) ?? []),
        ...((op.parameters as unknown[]) ?? []),
      ]) {
        const p = deref(doc, raw);
        byKey.set(`${String(p.in)}:${String(p.name)}`, {
          name: String(p.name),
          in: p.in as WalkedParameter['in'],
          required: p.required === true,
          schema: (p.schema as Schema | undefined) ?? true,
        });
      }
      const body = op.requestBody ? deref(doc, op.requestBody) : null;
      const requestBody = body
        ? { required: body.required === true, media: mediaOf(doc, body.content) }
        : null;
      const security = (op.security as SecurityRequirement[] | undefined) ?? doc.security ?? [];
      out.push({
        operationId: String(op.operationId),
        method,
        path,
        parameters: [...byKey.values()],
        requestBody,
        jsonBody: requestBody?.media.find((m) => m.mediaType === 'application/json')?.schema ?? null,
        responses: Object.entries((op.responses as Json | undefined) ?? {}).map(([status, r]) => ({
          status,
          media: mediaOf(doc, deref(doc, r).content),
        })),
        security,
        requiresAuth: requiresAuth(security),
      });
    }
  }
  return out;
}

/** The documented response for a status: the exact code, else its `4XX` range, else `default`. */
export function documentedResponse(op: WalkedOperation, status: number): WalkedResponse | undefined {
  const find = (key: string) => op.responses.find((r) => r.status.toUpperCase() === key);
  return find(String(status)) ?? find(`${String(status)[0]}XX`) ?? find('DEFAULT');
}

/** The documented media entry a Content-Type matches, wildcards (`image/*`) included. */
export function documentedMedia(response: WalkedResponse, contentType: string): WalkedMedia | undefined {
  const actual = contentType.split(';')[0]!.trim().toLowerCase();
  const [type] = actual.split('/');
  return (
    response.media.find((m) => m.mediaType.toLowerCase() === actual) ??
    response.media.find((m) => m.mediaType.toLowerCase() === `${type}/*`) ??
    response.media.find((m) => m.mediaType === '*/*')
  );
}

export function isJsonMediaType(mediaType: string): boolean {
  const base = mediaType.split(';')[0]!.trim().toLowerCase();
  return base === 'application/json' || base.endsWith('+json');
}
