// Inputs for one operation (valid, or broken in exactly one location) and how they travel: path
// segments, query string, headers and a body, sent with global fetch.
import * as fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { arbitrary, boundedFilter, describeCase, invalidCases, type ArbitraryOptions } from './arbitrary.js';
import { flatten, type Resolve, type Schema } from './json-schema.js';
import type { SchemaValidator } from './schema-validator.js';
import { isJsonMediaType, loadSpec, schemaResolver, type WalkedOperation, type WalkedParameter } from './spec-walk.js';

export type Location = 'path' | 'query' | 'header' | 'body';

export interface OperationInput {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  /** The body as a value of its schema; undefined sends none. */
  body?: unknown;
  /** Bytes sent as they are (a malformed JSON body), instead of `body`. */
  rawBody?: string;
}

export interface InvalidInput {
  location: Location;
  /** What was broken, for the failure message. */
  reason: string;
  input: OperationInput;
}

export const UNKNOWN_QUERY_PARAMETER = 'zz_unknown_param';
// Headers the spec may not describe as parameters (OpenAPI 3.1 §4.8.12.1).
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/** The request body media type the suite sends: JSON where offered, else the first listed. */
export function bodyMediaType(op: WalkedOperation): string | null {
  const media = op.requestBody?.media ?? [];
  return (
    (
      media.find((m) => isJsonMediaType(m.mediaType)) ??
      media.find((m) => m.mediaType === 'multipart/form-data') ??
      media[0]
    )?.mediaType ?? null
  );
}

function bodySchema(op: WalkedOperation): Schema | null {
  const type = bodyMediaType(op);
  return op.requestBody?.media.find((m) => m.mediaType === type)?.schema ?? (type ? true : null);
}

/** A parameter value as it travels: a string, or strings for a repeated query key. */
export function toWire(value: unknown): string | string[] {
  if (Array.isArray(value)) return value.map((v) => toWire(v) as string);
  if (value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

// Values that cannot travel as that parameter at all: an empty or dot path segment names another
// URL (URL parsing drops `.` and `..`, encoded or not), and a header value must be visible Latin-1
// without surrounding whitespace, which fetch would otherwise trim or refuse.
function travels(p: WalkedParameter, value: unknown): boolean {
  const wire = toWire(value);
  if (p.in === 'path') return typeof wire === 'string' && !['', '.', '..'].includes(wire);
  if (p.in === 'header')
    return (
      typeof wire === 'string' &&
      /^([\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/.test(wire)
    );
  // An empty list of a repeated query key is no key at all: the parameter left out, not a bad value.
  if (p.in === 'query' && Array.isArray(wire) && wire.length === 0) return false;
  return true;
}

// Header values are drawn from visible ASCII: anything else could not travel (see `travels`), and
// filtering for it would reject nearly every long string.
const HEADER_CHAR = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCodePoint(c));
const optionsFor = (p: WalkedParameter, resolve: Resolve): ArbitraryOptions =>
  p.in === 'header' ? { resolve, unit: HEADER_CHAR } : { resolve };

const sendable = (op: WalkedOperation) =>
  op.parameters.filter(
    (p) => p.in !== 'cookie' && !(p.in === 'header' && RESERVED_HEADERS.has(p.name.toLowerCase())),
  );

function parameterArbitraries(
  op: WalkedOperation,
  where: WalkedParameter['in'],
  resolve: Resolve,
  options: ValidInputOptions,
) {
  const model: Record<string, Arbitrary<unknown>> = {};
  const requiredKeys: string[] = [];
  for (const p of sendable(op).filter((q) => q.in === where)) {
    model[p.name] = boundedFilter(
      arbitrary(p.schema, p.in === 'header' ? optionsFor(p, resolve) : { resolve, ...options }),
      (v) => travels(p, v),
      `a valid ${p.in} ${p.name}`,
    );
    if (p.required || p.in === 'path') requiredKeys.push(p.name);
  }
  return fc.record(model, { requiredKeys });
}

export type ValidInputOptions = Pick<ArbitraryOptions, 'full' | 'unit'>;

/** Valid inputs; `unit` (for example only hostile characters) applies to all but header values. */
export function validInput(
  op: WalkedOperation,
  resolve: Resolve,
  options: ValidInputOptions = {},
): Arbitrary<OperationInput> {
  const schema = bodySchema(op);
  const body: Arbitrary<unknown> =
    schema === null
      ? fc.constant(undefined)
      : op.requestBody?.required
        ? arbitrary(schema, { resolve, ...options })
        : fc.option(arbitrary(schema, { resolve, ...options }), { nil: undefined });
  return fc.record({
    path: parameterArbitraries(op, 'path', resolve, options),
    query: parameterArbitraries(op, 'query', resolve, options),
    headers: parameterArbitraries(op, 'header', resolve, options),
    body,
  });
}

/**
 * Valid inputs that each fill one field with every hostile character (NUL, controls, astral...):
 * every path and query parameter, and every top-level body property on an otherwise minimal body,
 * so a value the server cannot store is found on every run rather than by chance, and is not
 * hidden behind another field's refusal.
 */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

export function hostileInputs(op: WalkedOperation, resolve: Resolve): OperationInput[] {
  const hostile: ArbitraryOptions = { resolve, full: true, hostile: true };
  const one = <T>(arb: Arbitrary<T>) => fc.sample(arb, { numRuns: 1, seed: 3 })[0]!;
  const base = one(validInput(op, resolve));
  const out: OperationInput[] = [];
  for (const p of sendable(op).filter((q) => q.in !== 'header')) {
    const v = one(arbitrary(p.schema, hostile));
    if (travels(p, v)) out.push(withParameter(base, p.in as 'path' | 'query', p.name, v));
    // A query value the schema allows with a URL-reserved character in it: clients leave `*!'()`
    // (and often `:/`) unencoded, so such a parameter must declare `allowReserved` or be refused.
    if (p.in === 'query') {
      const reserved = fc
        .sample(arbitrary(p.schema, hostile), { numRuns: 300, seed: 5 })
        .find((x) => typeof x === 'string' && RESERVED.test(x) && travels(p, x));
      if (reserved !== undefined) out.push(withParameter(base, 'query', p.name, reserved));
    }
  }
  const schema = bodySchema(op);
  const body = base.body;
  if (
    typeof schema === 'object' &&
    schema !== null &&
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body)
  ) {
    const s = flatten(schema, resolve);
    const required = new Set(s.required ?? []);
    const minimal = Object.fromEntries(Object.entries(body).filter(([k]) => required.has(k)));
    for (const [name, prop] of Object.entries(s.properties ?? {})) {
      out.push({ ...base, body: { ...minimal, [name]: one(arbitrary(prop, hostile)) } });
    }
  }
  return out;
}

/**
 * Inputs broken in exactly one place each: one arbitrary per broken rule (a parameter's schema
 * rule, a missing required parameter, an unknown query parameter, a body schema rule).
 */
export function invalidInputCases(
  op: WalkedOperation,
  resolve: Resolve,
  validator: SchemaValidator,
): Arbitrary<InvalidInput>[] {
  const base = validInput(op, resolve);
  const cases: Arbitrary<InvalidInput>[] = [];
  const broken = (location: Location, reason: string, arb: Arbitrary<OperationInput>) =>
    cases.push(arb.map((input) => ({ location, reason, input })));

  for (const p of sendable(op)) {
    const where = p.in as 'path' | 'query' | 'header';
    for (const c of invalidCases(p.schema, optionsFor(p, resolve))) {
      // Judged as the server reads it: `5` sent for a string parameter is the string "5". Some
      // rules cannot be broken on the wire at all (an empty path segment names another route).
      const refused = boundedFilter(
        c.arb,
        (v) => travels(p, v) && validator.wireErrors(p.schema, toWire(v)).length > 0,
        `an invalid ${p.in} ${p.name}`,
      );
      if (!generatesOnce(`${p.in}\0${JSON.stringify(p.schema)}\0${describeCase(c)}`, refused)) continue;
      const reason = `${where} parameter ${p.name} ${describeCase(c)}`;
      broken(
        where,
        reason,
        fc.tuple(base, refused).map(([i, v]) => withParameter(i, where, p.name, v)),
      );
    }
    if (p.required && where !== 'path') {
      const reason = `required ${where} parameter ${p.name} is missing`;
      broken(
        where,
        reason,
        base.map((i) => withParameter(i, where, p.name, undefined)),
      );
    }
  }
  const unknown = base.map((i) => ({ ...i, query: { ...i.query, [UNKNOWN_QUERY_PARAMETER]: '1' } }));
  broken('query', `unknown query parameter ${UNKNOWN_QUERY_PARAMETER}`, unknown);

  const media = bodyMediaType(op);
  if (op.jsonBody !== null && media !== null && isJsonMediaType(media)) {
    for (const c of invalidCases(op.jsonBody, { resolve })) {
      broken(
        'body',
        `body ${describeCase(c)}`,
        fc.tuple(base, c.arb).map(([i, body]) => ({ ...i, body })),
      );
    }
  }
  return cases;
}

// Whether a parameter's broken rule can be sent is the same for every operation with that parameter
// (an `id` in the path, a `cursor` in the query...): found once per run. A rule that cannot be sent costs
// the filter's 2000 candidates, each one validated, to find out.
const generated = new Map<string, boolean>();
function generatesOnce(key: string, arb: Arbitrary<unknown>): boolean {
  let known = generated.get(key);
  if (known === undefined) generated.set(key, (known = generates(arb)));
  return known;
}

function generates(arb: Arbitrary<unknown>): boolean {
  try {
    fc.sample(arb, { numRuns: 3, seed: 1 });
    return true;
  } catch {
    return false;
  }
}

/** A copy with one parameter set, or removed when `value` is undefined. */
function withParameter(
  input: OperationInput,
  where: 'path' | 'query' | 'header',
  name: string,
  value: unknown,
): OperationInput {
  const key = where === 'header' ? 'headers' : where;
  const { [name]: _old, ...rest } = input[key];
  return { ...input, [key]: value === undefined ? rest : { ...rest, [name]: value } };
}

let resolver: Resolve | null = null;
const specResolver = (): Resolve => (resolver ??= schemaResolver(loadSpec()));

function encodeBody(mediaType: string, body: unknown, schema: Schema | null): BodyInit {
  if (isJsonMediaType(mediaType)) return JSON.stringify(body);
  const fields = Object.entries((body ?? {}) as Record<string, unknown>);
  if (mediaType === 'multipart/form-data') {
    const form = new FormData();
    // The body schema is usually a reference (`AvatarUpload`): its properties say which parts are files.
    const flat = typeof schema === 'object' && schema !== null ? flatten(schema, specResolver()) : null;
    const props = flat?.properties ?? {};
    for (const [name, v] of fields) {
      const prop = props[name];
      // A binary property is a file part; everything else a plain field.
      if (typeof prop === 'object' && prop.format === 'binary')
        form.append(name, new Blob([String(v)]), 'upload.bin');
      else for (const one of [toWire(v)].flat()) form.append(name, one);
    }
    return form;
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    return new URLSearchParams(
      fields.flatMap(([k, v]) => [toWire(v)].flat().map((one): [string, string] => [k, one])),
    );
  }
  return typeof body === 'string' ? body : JSON.stringify(body);
}

export function toRequest(
  apiBase: string,
  op: WalkedOperation,
  input: OperationInput,
  extraHeaders: Record<string, string> = {},
): { url: string; init: RequestInit } {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    encodeURIComponent(toWire(input.path[name]) as string),
  );
  const query = new URLSearchParams();
  for (const [name, v] of Object.entries(input.query)) {
    if (v === undefined) continue;
    for (const one of [toWire(v)].flat()) query.append(name, one);
  }
  const headers = new Headers(extraHeaders);
  for (const [name, v] of Object.entries(input.headers))
    if (v !== undefined) headers.set(name, toWire(v) as string);
  const init: RequestInit = { method: op.method.toUpperCase(), headers, redirect: 'manual' };
  const media = bodyMediaType(op) ?? 'application/json';
  if (input.rawBody !== undefined) {
    headers.set('Content-Type', 'application/json');
    init.body = input.rawBody;
  } else if (input.body !== undefined) {
    init.body = encodeBody(media, input.body, bodySchema(op));
    // FormData sets its own boundary; a wildcard media type gets a concrete one.
    if (media !== 'multipart/form-data')
      headers.set(
        'Content-Type',
        media.replace('/*', '/octet-stream').replace('*/octet-stream', 'application/octet-stream'),
      );
  }
  const qs = query.toString();
  return { url: `${apiBase}${path}${qs ? `?${qs}` : ''}`, init };
}
