// The JSON Schema subset the spec uses, as types, and the few structural helpers both the data
// generator and the request-body checks need.

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
export type Schema = boolean | SchemaObject;
export interface SchemaObject {
  $ref?: string;
  type?: JsonType | JsonType[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  [keyword: string]: unknown;
}
export type Resolve = (ref: string) => Schema;

export const ALL_TYPES: JsonType[] = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];

/** The object a schema node stands for, with `$ref` and `allOf` folded in. */
export function flatten(schema: SchemaObject, resolve: Resolve): SchemaObject {
  let out = schema;
  for (let hops = 0; out.$ref !== undefined; hops += 1) {
    if (hops > 32) throw new Error(`reference cycle at ${schema.$ref}`);
    const { $ref, ...siblings } = out;
    const target = resolve($ref);
    if (typeof target === 'boolean') throw new Error(`boolean schema behind ${$ref} is not supported`);
    out = merge(target, siblings);
  }
  if (out.allOf) {
    const { allOf, ...rest } = out;
    out = allOf.reduce<SchemaObject>((acc, part) => {
      if (typeof part === 'boolean') throw new Error('boolean allOf branches are not supported');
      return merge(acc, flatten(part, resolve));
    }, rest);
  }
  return out;
}

// A shallow allOf: properties and required lists combine, other keywords from `b` win. Enough for
// "a base object plus a few fields"; not a general schema intersection.
export function merge(a: SchemaObject, b: SchemaObject): SchemaObject {
  const out: SchemaObject = { ...a, ...b };
  if (a.properties || b.properties) out.properties = { ...a.properties, ...b.properties };
  if (a.required || b.required) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  return out;
}

export function typesOf(s: SchemaObject): JsonType[] {
  if (s.type !== undefined) return Array.isArray(s.type) ? s.type : [s.type];
  if (s.properties || s.required || s.additionalProperties !== undefined) return ['object'];
  if (s.items || s.minItems !== undefined || s.maxItems !== undefined) return ['array'];
  if (s.minLength !== undefined || s.maxLength !== undefined || s.pattern || s.format) return ['string'];
  if (s.minimum !== undefined || s.maximum !== undefined) return ['number'];
  return ALL_TYPES;
}
