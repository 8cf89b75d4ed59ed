// What every answer must satisfy (DECISIONS.md §1, §2), as a list of violations so one failure
// message names all of them: X-Request-Id, a documented status and media type, a body valid against
// the documented schema, and problem+json errors with a known code and the request id.
import type { Schema } from './json-schema.js';
import type { SchemaValidator } from './schema-validator.js';
import {
  documentedMedia,
  documentedResponse,
  isJsonMediaType,
  type OpenApiDocument,
  type WalkedOperation,
} from './spec-walk.js';

export interface Received {
  status: number;
  headers: Headers;
  /** The Content-Type without parameters, lowercase; null when absent. */
  mediaType: string | null;
  bytes: Uint8Array;
  /** The parsed body when the media type is JSON and it parses. */
  json?: unknown;
}

export async function receive(res: Response): Promise<Received> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const mediaType = res.headers.get('content-type')?.split(';')[0]!.trim().toLowerCase() ?? null;
  const out: Received = { status: res.status, headers: res.headers, mediaType, bytes };
  if (mediaType && isJsonMediaType(mediaType) && bytes.length > 0) {
    try {
      out.json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      // Left undefined: the check reports a JSON media type that does not parse.
    }
  }
  return out;
}

export interface ResponseChecker {
  /** Violations of the contract by `res`; `op` null for answers outside any operation (404, 405). */
  violations(op: WalkedOperation | null, res: Received): string[];
}

export function createResponseChecker(doc: OpenApiDocument, validator: SchemaValidator): ResponseChecker {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, { enum?: string[] }>;
  const errorCodes = new Set(schemas.ErrorCode?.enum ?? []);
  const problemSchema: Schema = { $ref: '#/components/schemas/Problem' };

  const bodyViolations = (schema: Schema | undefined, res: Received, what: string): string[] => {
    if (res.json === undefined) return [`${what}: the ${res.mediaType} body is empty or not JSON`];
    if (schema === undefined) return [];
    return validator.errors(schema, res.json).map((e) => `${what}: ${e}`);
  };

  return {
    violations(op, res) {
      const out: string[] = [];
      const requestId = res.headers.get('x-request-id');
      if (!requestId) out.push('no X-Request-Id header');
      const hasBody = res.bytes.length > 0;

      if (op) {
        const documented = documentedResponse(op, res.status);
        if (!documented) {
          out.push(
            `status ${res.status} is not documented for ${op.operationId} (documented: ${op.responses.map((r) => r.status).join(', ')})`,
          );
        } else if (documented.media.length === 0) {
          if (hasBody)
            out.push(
              `status ${res.status} is documented without content, but the answer has a ${res.mediaType} body`,
            );
        } else if (op.method !== 'head') {
          const media = res.mediaType ? documentedMedia(documented, res.mediaType) : undefined;
          if (!media) {
            out.push(
              `Content-Type ${res.mediaType} is not documented for status ${res.status} (documented: ${documented.media.map((m) => m.mediaType).join(', ')})`,
            );
          } else if (isJsonMediaType(media.mediaType)) {
            out.push(...bodyViolations(media.schema, res, `body of ${res.status} ${media.mediaType}`));
          }
        }
      }

      if (res.status >= 400) {
        if (res.mediaType !== 'application/problem+json') {
          out.push(`an error answers ${res.mediaType}, not application/problem+json`);
        } else {
          // An operation's errors were validated against its documented schema above.
          if (!op) out.push(...bodyViolations(problemSchema, res, 'problem'));
          const problem = (res.json ?? {}) as { code?: unknown; request_id?: unknown; status?: unknown };
          if (!errorCodes.has(problem.code as string))
            out.push(`problem code ${JSON.stringify(problem.code)} is not in the spec's ErrorCode enum`);
          if (problem.request_id !== requestId)
            out.push(
              `problem request_id ${JSON.stringify(problem.request_id)} differs from X-Request-Id ${requestId}`,
            );
          if (problem.status !== res.status)
            out.push(
              `problem status ${JSON.stringify(problem.status)} differs from the HTTP status ${res.status}`,
            );
        }
      }
      return out;
    },
  };
}
