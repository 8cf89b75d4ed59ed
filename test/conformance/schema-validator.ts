// Ajv (draft 2020-12, as OpenAPI 3.1 uses) with the bundled spec registered, so a schema taken
// from anywhere in the spec validates with its `#/components/...` references resolving.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { Schema } from './json-schema.js';
import type { OpenApiDocument } from './spec-walk.js';

const SPEC_ID = 'urn:conformance:openapi';

export interface SchemaValidator {
  /** Ajv's messages for `value` against `schema`; empty when it is valid. */
  errors(schema: Schema, value: unknown): string[];
  /**
   * The same for a parameter as it travels (a string, or strings for a repeated query key), read
   * with type coercion as the server's validator reads query, path and header values.
   */
  wireErrors(schema: Schema, value: unknown): string[];
}

// A local `#/...` reference means "in the spec" wherever the schema came from.
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `${SPEC_ID}${v}` : rebase(v),
    ]),
  );
}

function build(doc: OpenApiDocument, coerceTypes: boolean) {
  // strict: false because OpenAPI adds keywords (example, discriminator, x-*) Ajv does not know.
  const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true, coerceTypes });
  ajvFormats.default(ajv);
  ajv.addSchema({ $id: SPEC_ID, components: doc.components ?? {} });
  const cache = new Map<string, ValidateFunction>();
  return (schema: Schema): ValidateFunction => {
    const key = JSON.stringify(schema);
    let fn = cache.get(key);
    if (!fn) {
      fn = ajv.compile(rebase(schema) as object);
      cache.set(key, fn);
    }
    return fn;
  };
}

const messages = (fn: ValidateFunction) =>
  (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);

export function createSchemaValidator(doc: OpenApiDocument): SchemaValidator {
  const strict = build(doc, false);
  const coercing = build(doc, true);
  return {
    errors(schema, value) {
      const fn = strict(schema);
      return fn(value) ? [] : messages(fn);
    },
    wireErrors(schema, value) {
      // Coercion rewrites in place, so it works on a wrapper and a copy.
      const fn = coercing({ type: 'object', properties: { value: schema } });
      return fn({ value: structuredClone(value) }) ? [] : messages(fn);
    },
  };
}
