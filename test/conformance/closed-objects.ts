// Request bodies reject unknown fields (DECISIONS.md §1): checks that every object a request schema
// describes is closed, and finds where in a valid body an unknown field can be slipped in.
import { escapePointerToken } from './json-pointer.js';
import { UNKNOWN_FIELDS } from './arbitrary.js';
import { flatten, merge, typesOf, type Resolve, type Schema, type SchemaObject } from './json-schema.js';

// Closed: `additionalProperties: false`, or `unevaluatedProperties: false` (the 3.1 way to close a
// composed schema), or a schema-valued `additionalProperties` (a deliberate dictionary whose values
// are still validated). Absent or `true` is open.
function isClosed(s: SchemaObject): boolean {
  return (
    s.additionalProperties === false ||
    s.unevaluatedProperties === false ||
    typeof s.additionalProperties === 'object'
  );
}

const declaresObject = (s: SchemaObject) =>
  s.properties !== undefined || (s.type !== undefined && typesOf(s).includes('object'));

/** Schema locations (`/properties/grant`) of object schemas that accept unknown fields. */
export function openObjectSchemas(schema: Schema, resolve: Resolve): string[] {
  const open: string[] = [];
  const seen = new Set<string>();
  const visit = (node: Schema, at: string) => {
    if (typeof node === 'boolean') return;
    if (node.$ref !== undefined) {
      // A recursive schema is checked once.
      if (seen.has(node.$ref)) return;
      seen.add(node.$ref);
    }
    const s = flatten(node, resolve);
    if (declaresObject(s) && !isClosed(s)) open.push(at || '/');
    for (const [name, prop] of Object.entries(s.properties ?? {}))
      visit(prop, `${at}/properties/${escapePointerToken(name)}`);
    if (s.items !== undefined) visit(s.items, `${at}/items`);
    if (typeof s.additionalProperties === 'object')
      visit(s.additionalProperties, `${at}/additionalProperties`);
    for (const [keyword, branches] of [
      ['oneOf', s.oneOf],
      ['anyOf', s.anyOf],
    ] as const) {
      (branches ?? []).forEach((b, i) => visit(b, `${at}/${keyword}/${i}`));
    }
  };
  visit(schema, '');
  return open;
}

/** Where in a body an unknown field can be slipped in, and a name its schema does not declare. */
export interface Slot {
  /** JSON pointer of the object (`''` for the root). */
  at: string;
  field: string;
}

/**
 * The objects in `value` whose schema refuses unknown fields outright. Under oneOf/anyOf the
 * first branch `value` matches applies (`matches` says which); without a match nothing is found.
 */
export function closedObjectSlots(
  schema: Schema,
  value: unknown,
  resolve: Resolve,
  matches: (schema: Schema, value: unknown) => boolean,
): Slot[] {
  const out: Slot[] = [];
  const visit = (node: Schema, v: unknown, at: string) => {
    if (typeof node === 'boolean' || v === null || typeof v !== 'object') return;
    const s = flatten(node, resolve);
    const branches = s.oneOf ?? s.anyOf;
    if (branches) {
      const { oneOf: _o, anyOf: _a, ...base } = s;
      const branch = branches.find((b) => matches(b, v));
      if (branch !== undefined) visit(typeof branch === 'boolean' ? branch : merge(base, branch), v, at);
      return;
    }
    if (Array.isArray(v)) {
      if (s.items !== undefined) v.forEach((item, i) => visit(s.items!, item, `${at}/${i}`));
      return;
    }
    const declared = Object.keys(s.properties ?? {});
    const field = UNKNOWN_FIELDS.find((f) => !declared.includes(f));
    if ((s.additionalProperties === false || s.unevaluatedProperties === false) && field)
      out.push({ at, field });
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      if (name in v) visit(prop, (v as Record<string, unknown>)[name], `${at}/${escapePointerToken(name)}`);
    }
  };
  visit(schema, value, '');
  return out;
}

/** A copy of `value` with `field` added to the object at `pointer`. */
export function withFieldAt(value: unknown, pointer: string, field: string, fieldValue: unknown): unknown {
  const copy = structuredClone(value);
  let target = copy as Record<string, unknown>;
  for (const token of pointer.split('/').slice(1)) {
    target = target[token.replace(/~1/g, '/').replace(/~0/g, '~')] as Record<string, unknown>;
  }
  target[field] = fieldValue;
  return copy;
}
