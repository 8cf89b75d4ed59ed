// JSON Schema → fast-check, for the subset our OpenAPI 3.1 spec uses: `arbitrary` makes values the
// schema accepts, `invalidArbitrary` values it must refuse. Written here because the only npm
// converter (json-schema-fast-check 0.0.6) targets fast-check 1. Anything outside the subset throws,
// so a new keyword in the spec fails loudly instead of silently generating the wrong data.
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { escapePointerToken } from './json-pointer.js';
import {
  ALL_TYPES,
  flatten,
  merge,
  typesOf,
  type JsonType,
  type Resolve,
  type Schema,
  type SchemaObject,
} from './json-schema.js';

export interface ArbitraryOptions {
  /** Resolves `$ref`s; without it a `$ref` throws. */
  resolve?: Resolve;
  /**
   * Every optional property present and no null where another type is allowed, down to the depth
   * limit: a value that exercises every field.
   */
  full?: boolean;
  /** One code point per value, for strings without a pattern or format (a header's charset). */
  unit?: Arbitrary<string>;
  /** Strings without a pattern or format are HOSTILE_CHARS, repeated or cut to fit the lengths. */
  hostile?: boolean;
}

interface Ctx {
  resolve: Resolve;
  depth: number;
  full: boolean;
  hostile: boolean;
  unit: Arbitrary<string>;
  /** Characters a string exactly at maxLength is made of. */
  fill: string[];
}

// Past this nesting, objects carry only required properties and arrays their minimum length, so a
// recursive schema ends.
const MAX_DEPTH = 4;
// Small collections keep requests cheap; the bounds themselves are exercised separately.
const EXTRA_ITEMS = 3;
const FORMAT_BOUNDS: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
const noRefs: Resolve = (ref) => {
  throw new Error(`no resolver given for "${ref}"`);
};

const contextOf = (o: ArbitraryOptions): Ctx => ({
  resolve: o.resolve ?? noRefs,
  depth: 0,
  full: o.full ?? false,
  hostile: o.hostile ?? false,
  unit: o.unit ?? anyChar,
  // One, two and four UTF-8 bytes (the last two UTF-16 units): a server that counts bytes or
  // UTF-16 units instead of code points refuses a valid value. A custom unit gets one of its own.
  fill: o.unit ? [fc.sample(o.unit, { numRuns: 1, seed: 1 })[0]!] : ['x', 'é', '\u{1F600}'],
});

export function arbitrary(schema: Schema, options: ArbitraryOptions = {}): Arbitrary<unknown> {
  return valid(schema, contextOf(options));
}

/**
 * `arb.filter(keep)` that throws after many rejections in a row. A plain filter that never passes
 * spins forever inside generation, where no test timeout can interrupt it.
 */
export function boundedFilter<T>(arb: Arbitrary<T>, keep: (v: T) => boolean, what: string): Arbitrary<T> {
  let misses = 0;
  return arb.filter((v) => {
    if (keep(v)) {
      misses = 0;
      return true;
    }
    misses += 1;
    if (misses > 2000) throw new Error(`cannot generate ${what}: 2000 candidates in a row were rejected`);
    return false;
  });
}

function valid(schema: Schema, ctx: Ctx): Arbitrary<unknown> {
  if (schema === true) return fc.jsonValue();
  if (schema === false) throw new Error('no value satisfies the schema `false`');
  const s = flatten(schema, ctx.resolve);
  if ('const' in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...notOnlyNull(ctx, s.enum, (v) => v === null));
  const branches = s.oneOf ?? s.anyOf;
  if (branches) {
    // A value may match two oneOf branches; our schemas keep branches disjoint by type.
    const { oneOf: _o, anyOf: _a, ...base } = s;
    const isNull = (b: Schema) => typeof b === 'object' && b.type === 'null';
    const arbs = notOnlyNull(ctx, branches, isNull).map((b) =>
      valid(typeof b === 'boolean' ? b : merge(base, b), ctx),
    );
    return fc.oneof(...arbs);
  }
  return fc.oneof(...notOnlyNull(ctx, typesOf(s), (t) => t === 'null').map((t) => validOfType(t, s, ctx)));
}

/** In a full value, the null choice is dropped wherever there is another. */
function notOnlyNull<T>(ctx: Ctx, choices: T[], isNull: (c: T) => boolean): T[] {
  const rest = choices.filter((c) => !isNull(c));
  return ctx.full && rest.length > 0 ? rest : choices;
}

function validOfType(type: JsonType, s: SchemaObject, ctx: Ctx): Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'string':
      return validString(s, ctx);
    case 'integer':
    case 'number':
      return validNumber(type, s);
    case 'array':
      return validArray(s, ctx);
    case 'object':
      return validObject(s, ctx);
  }
}

const codePoints = (v: string) => [...v].length;

/** Characters servers and databases tend to mishandle: NUL, controls, separators, astral, quotes. */
export const HOSTILE_CHARS = [
  '\u0000',
  '\u0001',
  '\u007f',
  '\u00e9',
  '\u2028',
  '\ufeff',
  '\u{1F600}',
  '%',
  '\\',
  '"',
  "'",
];

// One code point per unit, as JSON Schema counts lengths: mostly printable ASCII so values look
// like input, sometimes a hostile character or anything at all, which is where servers break.
const anyChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_CHARS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** Every hostile character, NUL first, repeated or cut to a length within the bounds. */
function hostileText(min: number, max: number | undefined): string {
  const chars = [...HOSTILE_CHARS.join('')];
  const length = Math.max(min, Math.min(max ?? Infinity, chars.length));
  return Array.from({ length }, (_, i) => chars[i % chars.length]).join('');
}

type Lengths = { minLength?: number; maxLength?: number; size?: 'max' };
const stringOf = (unit: Arbitrary<string>, c: Lengths = {}) => fc.string({ unit, ...c });

// Formats with a generator of their own; lengths are then enforced by filtering.
const FORMATS: Record<string, () => Arbitrary<string>> = {
  uuid: () => fc.uuid(),
  'date-time': () => isoDate().map((d) => d.toISOString()),
  date: () => isoDate().map((d) => d.toISOString().slice(0, 10)),
  email: () => fc.emailAddress(),
  uri: () => fc.webUrl(),
  hostname: () => fc.domain(),
  ipv4: () => fc.ipV4(),
  // OpenAPI's informational formats: any string is fine.
  password: () => stringOf(anyChar),
  binary: () => stringOf(anyChar),
};

// Four-digit years only: toISOString writes `+010000-...` beyond, which is not RFC 3339.
const isoDate = () =>
  fc.date({
    min: new Date('1900-01-01T00:00:00Z'),
    max: new Date('2199-12-31T23:59:59Z'),
    noInvalidDate: true,
  });

function validString(s: SchemaObject, ctx: Ctx): Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength;
  const inRange = (v: string) => codePoints(v) >= min && (max === undefined || codePoints(v) <= max);
  if (s.pattern !== undefined)
    return boundedFilter(
      fc.stringMatching(new RegExp(s.pattern, 'u')),
      inRange,
      `/${s.pattern}/ within lengths`,
    );
  if (s.format !== undefined) {
    const make = FORMATS[s.format];
    if (!make) throw new Error(`arbitrary.ts knows no generator for format "${s.format}"; add one`);
    return boundedFilter(make(), inRange, `format ${s.format} within lengths`);
  }
  if (ctx.hostile) return fc.constant(hostileText(min, max));
  const anyString = (c: Lengths) => stringOf(ctx.unit, c);
  const any = anyString({ minLength: min, ...(max === undefined ? {} : { maxLength: max }) });
  if (max === undefined) return any;
  // fast-check's default size rarely gets near a large maxLength: a share spans the whole range
  // (and still shrinks short), a smaller one sits exactly on the boundary, built from repeated
  // characters so it needs no shrinking.
  return fc.oneof(
    { arbitrary: any, weight: 3 },
    { arbitrary: anyString({ minLength: min, maxLength: max, size: 'max' }), weight: 1 },
    { arbitrary: fc.constantFrom(...ctx.fill.map((c) => c.repeat(max))), weight: 1 },
  );
}

/** The inclusive integer bounds a schema allows, with format bounds applied. */
function integerBounds(s: SchemaObject): [number, number] {
  const [fmin, fmax] = FORMAT_BOUNDS[s.format ?? 'int64'] ?? FORMAT_BOUNDS.int64!;
  let lo = fmin;
  let hi = fmax;
  if (s.minimum !== undefined) lo = Math.max(lo, Math.ceil(s.minimum));
  if (s.exclusiveMinimum !== undefined) lo = Math.max(lo, Math.floor(s.exclusiveMinimum) + 1);
  if (s.maximum !== undefined) hi = Math.min(hi, Math.floor(s.maximum));
  if (s.exclusiveMaximum !== undefined) hi = Math.min(hi, Math.ceil(s.exclusiveMaximum) - 1);
  return [lo, hi];
}

function validNumber(type: 'integer' | 'number', s: SchemaObject): Arbitrary<number> {
  if (type === 'integer' || s.multipleOf !== undefined) {
    const [lo, hi] = integerBounds(s);
    const step = s.multipleOf ?? 1;
    const ints = fc.integer({ min: Math.ceil(lo / step), max: Math.floor(hi / step) }).map((k) => k * step);
    const edges = fc.constantFrom(Math.ceil(lo / step) * step, Math.floor(hi / step) * step);
    return fc.oneof({ arbitrary: ints, weight: 4 }, { arbitrary: edges, weight: 1 });
  }
  return fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(s.minimum !== undefined ? { min: s.minimum } : {}),
    ...(s.maximum !== undefined ? { max: s.maximum } : {}),
    ...(s.exclusiveMinimum !== undefined ? { min: s.exclusiveMinimum, minExcluded: true } : {}),
    ...(s.exclusiveMaximum !== undefined ? { max: s.exclusiveMaximum, maxExcluded: true } : {}),
  });
}

function arrayLengths(s: SchemaObject, ctx: Ctx): { minLength: number; maxLength: number } {
  const minLength = s.minItems ?? 0;
  const cap = ctx.depth >= MAX_DEPTH ? minLength : minLength + EXTRA_ITEMS;
  return { minLength, maxLength: Math.min(s.maxItems ?? cap, cap) };
}

function validArray(s: SchemaObject, ctx: Ctx): Arbitrary<unknown[]> {
  // A tuple (`prefixItems`, as a metrics point `[time, value]`): its positions, then what `items` allows.
  const prefix = (s as { prefixItems?: Schema[] }).prefixItems;
  if (prefix) {
    const head = fc.tuple(...prefix.map((p) => valid(p, { ...ctx, depth: ctx.depth + 1 })));
    if (s.items === false || (s.maxItems ?? Infinity) <= prefix.length) return head;
    const rest = fc.array(valid(s.items ?? true, { ...ctx, depth: ctx.depth + 1 }), {
      maxLength: Math.min(3, (s.maxItems ?? Infinity) - prefix.length),
    });
    return fc.tuple(head, rest).map(([h, r]) => [...h, ...r]);
  }
  const items = valid(s.items ?? true, { ...ctx, depth: ctx.depth + 1 });
  const lengths = arrayLengths(s, ctx);
  return s.uniqueItems
    ? fc.uniqueArray(items, { ...lengths, selector: (v) => JSON.stringify(v) })
    : fc.array(items, lengths);
}

function validObject(s: SchemaObject, ctx: Ctx): Arbitrary<Record<string, unknown>> {
  const inner = { ...ctx, depth: ctx.depth + 1 };
  const required = new Set(s.required ?? []);
  const shallow = ctx.depth >= MAX_DEPTH;
  const model: Record<string, Arbitrary<unknown>> = {};
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    if (required.has(name) || !shallow) model[name] = valid(prop, inner);
  }
  // A required name without a property schema may hold anything.
  for (const name of required) model[name] ??= fc.jsonValue();
  const requiredKeys = ctx.full && !shallow ? Object.keys(model) : [...required];
  const fixed = fc.record(model, { requiredKeys });
  const extra = s.additionalProperties;
  if (extra === undefined || typeof extra === 'boolean' || shallow) return fixed;
  // A dictionary (`additionalProperties: {schema}`): a few free keys besides the declared ones.
  const key = boundedFilter(
    fc.string({ minLength: 1, maxLength: 12 }),
    (k) => !(k in model) && k !== '__proto__',
    'a free key',
  );
  return fc
    .tuple(fixed, fc.dictionary(key, valid(extra, inner), { maxKeys: EXTRA_ITEMS }))
    .map(([declared, free]) => ({ ...free, ...declared }));
}

// ---------------------------------------------------------------------------------------------
// Invalid values. Each case breaks exactly one rule of an otherwise valid value, so a refusal can be
// traced to that rule, and a run can try every rule at least once.

/** One way to break a schema: where (a JSON pointer into the value), which rule, and values. */
export interface InvalidCase {
  path: string;
  rule: string;
  arb: Arbitrary<unknown>;
}

export const describeCase = (c: InvalidCase) => `${c.path || '/'}: ${c.rule}`;

/** Every way the generator knows to break the schema, one rule each. */
export function invalidCases(schema: Schema, options: ArbitraryOptions = {}): InvalidCase[] {
  return invalid(schema, { ...contextOf(options), full: false });
}

/** Values the schema refuses, one rule broken each; null when the schema accepts everything. */
export function invalidArbitrary(schema: Schema, options: ArbitraryOptions = {}): Arbitrary<unknown> | null {
  const cases = invalidCases(schema, options);
  return cases.length === 0 ? null : fc.oneof(...cases.map((c) => c.arb));
}

const here = (rule: string, arb: Arbitrary<unknown>): InvalidCase => ({ path: '', rule, arb });
const under = (prefix: string, cases: InvalidCase[], wrap: (arb: Arbitrary<unknown>) => Arbitrary<unknown>) =>
  cases.map((c) => ({ path: `${prefix}${c.path}`, rule: c.rule, arb: wrap(c.arb) }));

function invalid(schema: Schema, ctx: Ctx): InvalidCase[] {
  if (schema === true) return [];
  if (schema === false) return [here('accepts nothing', fc.jsonValue())];
  const s = flatten(schema, ctx.resolve);
  if ('const' in s) {
    const other = boundedFilter(
      fc.jsonValue(),
      (v) => !isDeepStrictEqual(v, s.const),
      'a value other than the const',
    );
    return [here(`not ${JSON.stringify(s.const)}`, other)];
  }
  const out = s.type === undefined ? [] : wrongType(typesOf(s));
  const branches = s.oneOf ?? s.anyOf;
  if (branches) {
    // Only a type no branch allows is certainly refused by every branch.
    const declared = (b: Schema) => {
      const f = typeof b === 'boolean' ? {} : flatten(b, ctx.resolve);
      return f.type === undefined ? ALL_TYPES : typesOf(f);
    };
    const types = new Set(out.map((c) => c.rule));
    return [...out, ...wrongType(branches.flatMap(declared)).filter((c) => !types.has(c.rule))];
  }
  if (s.enum) {
    const allowed = s.enum;
    // Booleans and null have too few values to search for one outside the enum.
    const types = typesOf(s).filter((t) => t !== 'null' && t !== 'boolean');
    const outside = types.map((t) =>
      boundedFilter(
        anyOfType(t, ctx),
        (v) => !allowed.some((e) => isDeepStrictEqual(e, v)),
        'a value outside the enum',
      ),
    );
    return outside.length === 0 ? out : [...out, here('outside the enum', fc.oneof(...outside))];
  }
  for (const type of typesOf(s)) out.push(...invalidOfType(type, s, ctx));
  return out;
}

// Values of each JSON type, for "wrong type" cases.
const OF_TYPE: [JsonType, string, Arbitrary<unknown>][] = [
  ['string', 'a string', fc.string()],
  ['integer', 'an integer', fc.integer()],
  ['number', 'a fraction', fc.integer().map((n) => n + 0.5)],
  ['boolean', 'a boolean', fc.boolean()],
  ['null', 'null', fc.constant(null)],
  // At least two items: a one-item array in a query, path or header goes on the wire as one plain value.
  ['array', 'an array', fc.array(fc.jsonValue(), { minLength: 2, maxLength: 3 })],
  [
    'object',
    'an object',
    fc.dictionary(
      fc.string({ minLength: 1 }).filter((k) => k !== '__proto__'),
      fc.jsonValue(),
      { maxKeys: 3 },
    ),
  ],
];

/** One case per JSON type outside `allowed`: servers mishandle each differently (coercion). */
function wrongType(allowed: JsonType[]): InvalidCase[] {
  const has = (t: JsonType) => allowed.includes(t) || (t === 'integer' && allowed.includes('number'));
  return OF_TYPE.filter(([t]) => !has(t)).map(([, name, arb]) =>
    here(`${name}, not ${allowed.join(' or ')}`, arb),
  );
}

function anyOfType(type: JsonType, ctx: Ctx): Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringOf(ctx.unit);
    case 'integer':
      return fc.integer();
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fc.jsonValue(), { maxLength: 3 });
    case 'object':
      return fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 });
  }
}

function invalidOfType(type: JsonType, s: SchemaObject, ctx: Ctx): InvalidCase[] {
  switch (type) {
    case 'string':
      return invalidString(s, ctx);
    case 'integer':
    case 'number':
      return invalidNumber(type, s);
    case 'array':
      return invalidArray(s, ctx);
    case 'object':
      return invalidObject(s, ctx);
    case 'null':
    case 'boolean':
      return [];
  }
}

// Strings each format refuses (ajv-formats' definitions).
const BAD_FORMAT: Record<string, string[]> = {
  uuid: ['not-a-uuid', '0000000-0000-0000-0000-000000000000', '{00000000-0000-0000-0000-000000000000}'],
  'date-time': ['2026-13-01T00:00:00Z', '2026-01-01 25:00', 'yesterday', '2026-01-01T00:00:00'],
  date: ['2026-02-30x', '26-1-1', 'today'],
  email: ['no-at-sign', '@example.com', 'a@', 'a b@example.com'],
  uri: ['not a uri', '//no-scheme', ':'],
  hostname: ['-leading-dash.example', 'under_score.example', 'a..b', `${'a'.repeat(64)}.example`],
  ipv4: ['256.0.0.1', '1.2.3', 'localhost'],
};
// Probes for "does not match the pattern": a strict pattern refuses most of them.
const PATTERN_PROBES = ['', ' ', '!', 'a b', '\u0000', '\u{1F600}', 'ZZ', '0', '-', '..', 'a/b', '%'];

function invalidString(s: SchemaObject, ctx: Ctx): InvalidCase[] {
  const out: InvalidCase[] = [];
  const anyString = (c: Lengths = {}) => stringOf(ctx.unit, c);
  const min = s.minLength ?? 0;
  if (s.maxLength !== undefined) {
    out.push(
      here(
        `longer than ${s.maxLength}`,
        anyString({ minLength: s.maxLength + 1, maxLength: s.maxLength + 8 }),
      ),
    );
  }
  if (min > 0) out.push(here(`shorter than ${min}`, anyString({ maxLength: min - 1 })));
  if (s.format !== undefined && BAD_FORMAT[s.format]) {
    out.push(here(`not format ${s.format}`, fc.constantFrom(...BAD_FORMAT[s.format]!)));
  }
  if (s.pattern !== undefined) {
    const re = new RegExp(s.pattern, 'u');
    const misses = PATTERN_PROBES.filter((p) => !re.test(p));
    const arbs: Arbitrary<unknown>[] = misses.length > 0 ? [fc.constantFrom(...misses)] : [];
    // Only a strict pattern is worth random search: a loose one would spin the filter.
    if (misses.length * 2 > PATTERN_PROBES.length) {
      arbs.push(boundedFilter(anyString(), (v) => !re.test(v), `a miss of /${s.pattern}/`));
    }
    if (arbs.length > 0) out.push(here(`does not match /${s.pattern}/`, fc.oneof(...arbs)));
  }
  return out;
}

function invalidNumber(type: 'integer' | 'number', s: SchemaObject): InvalidCase[] {
  const out: InvalidCase[] = [];
  const [lo, hi] =
    type === 'integer'
      ? integerBounds(s)
      : [s.minimum ?? s.exclusiveMinimum, s.maximum ?? s.exclusiveMaximum];
  const lowInclusive = type === 'integer' || s.exclusiveMinimum === undefined;
  const highInclusive = type === 'integer' || s.exclusiveMaximum === undefined;
  const step = fc.integer({ min: 1, max: 1000 });
  // Past int64's safe range a JSON number loses precision, so nothing beyond is reliably refused.
  if (lo !== undefined && lo > Number.MIN_SAFE_INTEGER) {
    out.push(
      here(
        `below ${lo}`,
        step.map((d) => (lowInclusive ? lo - d : lo - d + 1)),
      ),
    );
  }
  if (hi !== undefined && hi < Number.MAX_SAFE_INTEGER) {
    out.push(
      here(
        `above ${hi}`,
        step.map((d) => (highInclusive ? hi + d : hi + d - 1)),
      ),
    );
  }
  const [ilo, ihi] = integerBounds(s);
  if (type === 'integer' && !typesOf(s).includes('number') && ilo < ihi) {
    const within = fc.integer({ min: Math.max(ilo, -1e9), max: Math.min(ihi - 1, 1e9) });
    out.push(
      here(
        'not an integer',
        within.map((n) => n + 0.5),
      ),
    );
  }
  return out;
}

function invalidArray(s: SchemaObject, ctx: Ctx): InvalidCase[] {
  const out: InvalidCase[] = [];
  const inner = { ...ctx, depth: ctx.depth + 1 };
  const item = valid(s.items ?? true, inner);
  const min = s.minItems ?? 0;
  if (min > 0) out.push(here(`fewer than ${min} items`, fc.array(item, { maxLength: min - 1 })));
  if (s.maxItems !== undefined) {
    out.push(
      here(
        `more than ${s.maxItems} items`,
        fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 3 }),
      ),
    );
  }
  if (s.uniqueItems) {
    const some = fc.array(item, { minLength: 1, maxLength: Math.max(1, (s.maxItems ?? 2) - 1) });
    out.push(
      here(
        'duplicate items',
        some.map((a) => [...a, a[0]]),
      ),
    );
  }
  if (ctx.depth >= MAX_DEPTH) return out;
  // One bad item among valid ones, at a random place.
  const others = fc.array(item, { minLength: Math.max(0, min - 1), maxLength: Math.max(0, min - 1) });
  const withBad = (bad: Arbitrary<unknown>) =>
    fc.tuple(others, bad, fc.nat()).map(([rest, b, at]) => {
      const copy = [...rest];
      copy.splice(at % (copy.length + 1), 0, b);
      return copy;
    });
  return [...out, ...under('/-', invalid(s.items ?? true, inner), withBad)];
}

// Names for a field the schema does not declare; the first one not taken is used.
export const UNKNOWN_FIELDS = ['zz_unknown_field', 'zzUnknownField', 'zz_unknown_field_2'];

function invalidObject(s: SchemaObject, ctx: Ctx): InvalidCase[] {
  const out: InvalidCase[] = [];
  const base = validObject(s, ctx);
  const declared = Object.keys(s.properties ?? {});
  const extra = UNKNOWN_FIELDS.find((f) => !declared.includes(f));
  for (const name of s.required ?? []) {
    out.push(
      here(
        `missing required ${name}`,
        base.map(({ [name]: _gone, ...rest }) => rest),
      ),
    );
  }
  if (s.additionalProperties === false && extra) {
    out.push(
      here(
        `unknown field ${extra}`,
        fc.tuple(base, fc.jsonValue()).map(([o, v]) => ({ ...o, [extra]: v })),
      ),
    );
  }
  if (ctx.depth >= MAX_DEPTH) return out;
  const inner = { ...ctx, depth: ctx.depth + 1 };
  const set = (name: string) => (bad: Arbitrary<unknown>) =>
    fc.tuple(base, bad).map(([o, v]) => ({ ...o, [name]: v }));
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    out.push(...under(`/${escapePointerToken(name)}`, invalid(prop, inner), set(name)));
  }
  if (typeof s.additionalProperties === 'object' && extra) {
    out.push(...under(`/${extra}`, invalid(s.additionalProperties, inner), set(extra)));
  }
  return out;
}
