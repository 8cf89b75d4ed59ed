import { readFileSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import { validateUnitSignal } from '../../server/src/substrate/unit-signal.js';
import { unitSignalCrd, unitSignalTypes } from '../../scripts/gen/unit-signal.js';

const schemaUrl = new URL('../../spec/unit-signal.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(schemaUrl, 'utf8')) as object;

const base = { unitId: 'unit-1', key: 'web', contractVersion: 1, generation: 0 };
const full = {
  ...base,
  generation: 7,
  labels: { tier: 'game', 'app.kubernetes_io-x': 'v'.repeat(64) },
  userData: { motd: 'hi', slots: [1, 2] },
  allocation: { id: 'alloc-1', generation: 3, allocatedAt: '2024-05-01T12:00:00Z' },
  draining: false,
  publicEndpoints: [{ protocols: ['tcp', 'udp'], internal_port: 25565, address: '203.0.113.7:31000' }],
};
const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, 'v']));

type Case = [string, { given: unknown; want: { ok: true } | { pointers: string[] } }];
const ok = { ok: true } as const;
const fails = (...pointers: string[]) => ({ pointers });

const valid: Case[] = [
  ['minimal', { given: base, want: ok }],
  ['full', { given: full, want: ok }],
  ...(['stop', 'destroy', 'replace', 'scale_down'] as const).map((d): Case => [
    `draining ${d}`,
    { given: { ...base, draining: d }, want: ok },
  ]),
  ['draining false', { given: { ...base, draining: false }, want: ok }],
  ['allocation null', { given: { ...base, allocation: null }, want: ok }],
  [
    'allocation without allocatedAt',
    { given: { ...base, allocation: { id: 'a', generation: 0 } }, want: ok },
  ],
  [
    'allocation generation negative',
    { given: { ...base, allocation: { id: 'a', generation: -2 } }, want: ok },
  ],
  ...([null, 'text', 42, 1.5, true, [1, 'two', null], { nested: { deep: [] } }] as const).map((u): Case => [
    `userData ${JSON.stringify(u)}`,
    { given: { ...base, userData: u }, want: ok },
  ]),
  ['16 labels', { given: { ...base, labels: labels(16) }, want: ok }],
  ['empty label value', { given: { ...base, labels: { a: '' } }, want: ok }],
  ['single-character key', { given: { ...base, key: 'a' }, want: ok }],
  ['128-char unitId', { given: { ...base, unitId: 'u'.repeat(128) }, want: ok }],
  ['40-char key', { given: { ...base, key: 'k'.repeat(40) }, want: ok }],
  ['empty publicEndpoints', { given: { ...base, publicEndpoints: [] }, want: ok }],
  [
    'ports 1 and 65535',
    {
      given: {
        ...base,
        publicEndpoints: [1, 65535].map((p) => ({ protocols: [], internal_port: p, address: 'a' })),
      },
      want: ok,
    },
  ],
  [
    'unknown fields everywhere',
    {
      given: {
        ...full,
        futureField: { x: 1 },
        allocation: { ...full.allocation, zone: 'eu' },
        publicEndpoints: [{ ...full.publicEndpoints[0], weight: 2 }],
      },
      want: ok,
    },
  ],
];

const invalid: Case[] = [
  ['not an object', { given: [], want: fails('') }],
  ['unitId missing', { given: { ...base, unitId: undefined }, want: fails('/unitId') }],
  ['unitId empty', { given: { ...base, unitId: '' }, want: fails('/unitId') }],
  ['unitId 129 chars', { given: { ...base, unitId: 'u'.repeat(129) }, want: fails('/unitId') }],
  ['unitId not a string', { given: { ...base, unitId: 5 }, want: fails('/unitId') }],
  ['key missing', { given: { ...base, key: undefined }, want: fails('/key') }],
  ['key empty', { given: { ...base, key: '' }, want: fails('/key') }],
  ['key uppercase', { given: { ...base, key: 'Web' }, want: fails('/key') }],
  ['key underscore', { given: { ...base, key: 'my_key' }, want: fails('/key') }],
  ['key 41 chars', { given: { ...base, key: 'k'.repeat(41) }, want: fails('/key') }],
  ['key leading hyphen', { given: { ...base, key: '-web' }, want: fails('/key') }],
  ['key trailing hyphen', { given: { ...base, key: 'web-' }, want: fails('/key') }],
  ['17 labels', { given: { ...base, labels: labels(17) }, want: fails('/labels') }],
  ['label name uppercase', { given: { ...base, labels: { Tier: 'x' } }, want: fails('/labels/Tier') }],
  ['label name trailing dot', { given: { ...base, labels: { 'tier.': 'x' } }, want: fails('/labels/tier.') }],
  ['label name with slash', { given: { ...base, labels: { 'a/b': 'x' } }, want: fails('/labels/a~1b') }],
  ['label name empty', { given: { ...base, labels: { '': 'x' } }, want: fails('/labels/') }],
  [
    'label name 33 chars',
    { given: { ...base, labels: { ['n'.repeat(33)]: 'x' } }, want: fails(`/labels/${'n'.repeat(33)}`) },
  ],
  ['label value 65 chars', { given: { ...base, labels: { a: 'v'.repeat(65) } }, want: fails('/labels/a') }],
  ['label value number', { given: { ...base, labels: { a: 1 } }, want: fails('/labels/a') }],
  ['label value null', { given: { ...base, labels: { a: null } }, want: fails('/labels/a') }],
  ['labels not an object', { given: { ...base, labels: ['a'] }, want: fails('/labels') }],
  [
    'allocation missing id',
    { given: { ...base, allocation: { generation: 1 } }, want: fails('/allocation/id') },
  ],
  [
    'allocation missing generation',
    { given: { ...base, allocation: { id: 'a' } }, want: fails('/allocation/generation') },
  ],
  [
    'allocation empty id',
    { given: { ...base, allocation: { id: '', generation: 1 } }, want: fails('/allocation/id') },
  ],
  [
    'allocation 129-char id',
    { given: { ...base, allocation: { id: 'a'.repeat(129), generation: 1 } }, want: fails('/allocation/id') },
  ],
  [
    'allocation generation 1.5',
    { given: { ...base, allocation: { id: 'a', generation: 1.5 } }, want: fails('/allocation/generation') },
  ],
  [
    'allocation generation string',
    { given: { ...base, allocation: { id: 'a', generation: '1' } }, want: fails('/allocation/generation') },
  ],
  [
    'allocatedAt not a date-time',
    {
      given: { ...base, allocation: { id: 'a', generation: 1, allocatedAt: 'yesterday' } },
      want: fails('/allocation/allocatedAt'),
    },
  ],
  [
    'allocatedAt date only',
    {
      given: { ...base, allocation: { id: 'a', generation: 1, allocatedAt: '2024-05-01' } },
      want: fails('/allocation/allocatedAt'),
    },
  ],
  ['allocation a string', { given: { ...base, allocation: 'a' }, want: fails('/allocation') }],
  ['draining true', { given: { ...base, draining: true }, want: fails('/draining') }],
  ['draining "pause"', { given: { ...base, draining: 'pause' }, want: fails('/draining') }],
  ['draining null', { given: { ...base, draining: null }, want: fails('/draining') }],
  ['contractVersion 2', { given: { ...base, contractVersion: 2 }, want: fails('/contractVersion') }],
  ['contractVersion "1"', { given: { ...base, contractVersion: '1' }, want: fails('/contractVersion') }],
  [
    'contractVersion missing',
    { given: { ...base, contractVersion: undefined }, want: fails('/contractVersion') },
  ],
  ['generation -1', { given: { ...base, generation: -1 }, want: fails('/generation') }],
  ['generation 1.5', { given: { ...base, generation: 1.5 }, want: fails('/generation') }],
  ['generation missing', { given: { ...base, generation: undefined }, want: fails('/generation') }],
  [
    'publicEndpoints not an array',
    { given: { ...base, publicEndpoints: {} }, want: fails('/publicEndpoints') },
  ],
  [
    'publicEndpoints item missing fields',
    {
      given: { ...base, publicEndpoints: [{}] },
      want: fails(
        '/publicEndpoints/0/protocols',
        '/publicEndpoints/0/internal_port',
        '/publicEndpoints/0/address',
      ),
    },
  ],
  ...[0, 65536, 80.5].map((p): Case => [
    `internal_port ${p}`,
    {
      given: { ...base, publicEndpoints: [{ protocols: ['tcp'], internal_port: p, address: 'a' }] },
      want: fails('/publicEndpoints/0/internal_port'),
    },
  ]),
  [
    'protocols not strings',
    {
      given: { ...base, publicEndpoints: [{ protocols: ['tcp', 6], internal_port: 80, address: 'a' }] },
      want: fails('/publicEndpoints/0/protocols/1'),
    },
  ],
  [
    'protocols not an array',
    {
      given: { ...base, publicEndpoints: [{ protocols: 'tcp', internal_port: 80, address: 'a' }] },
      want: fails('/publicEndpoints/0/protocols'),
    },
  ],
  [
    'address not a string',
    {
      given: { ...base, publicEndpoints: [{ protocols: [], internal_port: 80, address: 7 }] },
      want: fails('/publicEndpoints/0/address'),
    },
  ],
];

// JSON has no undefined: the cases use it to drop a field from base.
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('validateUnitSignal', () => {
  it.each([...valid, ...invalid])('%s', (_name, { given, want }) => {
    const got = validateUnitSignal(asJson(given));
    if ('ok' in want) {
      expect(got).toEqual({ ok: true, spec: asJson(given) });
      return;
    }
    expect(got.ok).toBe(false);
    if (got.ok) return;
    expect([...new Set(got.errors.map((e) => e.pointer))].sort()).toEqual([...want.pointers].sort());
    for (const e of got.errors) expect(e.message).not.toBe('');
  });

  it('says which draining values are allowed', () => {
    const got = validateUnitSignal({ ...base, draining: 'pause' });
    expect(got).toEqual({
      ok: false,
      errors: [
        { pointer: '/draining', message: 'must be one of false, "stop", "destroy", "replace", "scale_down"' },
      ],
    });
  });

  it('reports every problem at once', () => {
    const got = validateUnitSignal({ unitId: '', key: 'Bad', contractVersion: 2 });
    expect(got.ok).toBe(false);
    if (got.ok) return;
    expect(got.errors.map((e) => e.pointer).sort()).toEqual([
      '/contractVersion',
      '/generation',
      '/key',
      '/unitId',
    ]);
  });
});

describe('schema file', () => {
  it('describes every property', () => {
    const missing: string[] = [];
    walk(schema, '', (node, at) => {
      for (const [name, sub] of Object.entries((node.properties ?? {}) as Record<string, Node>)) {
        if (typeof sub.description !== 'string' || sub.description === '') missing.push(`${at}/${name}`);
      }
    });
    expect(missing).toEqual([]);
  });
});

describe('unitSignalTypes', () => {
  it('exports UnitSignalSpec and UnitSignalStatus, deterministically', async () => {
    const a = await unitSignalTypes(schema);
    expect(a).toMatch(/^export interface UnitSignalSpec \{/m);
    expect(a).toMatch(/^export interface UnitSignalStatus \{/m);
    expect(a).toMatch(/^ {2}userData\?: unknown;$/m);
    expect(a).toMatch(/^ {2}draining\?: false \| \('stop' \| 'destroy' \| 'replace' \| 'scale_down'\);$/m);
    expect(await unitSignalTypes(schema)).toBe(a);
  });

  it('matches the checked-in generated/unit-signal.ts', async () => {
    const checkedIn = readFileSync(new URL('../../generated/unit-signal.ts', import.meta.url), 'utf8');
    const body = checkedIn.replace(/^(\/\/.*\n|\s*\n)*/, '');
    expect(body).toBe(await unitSignalTypes(schema));
  });
});

type Node = Record<string, unknown>;

function walk(node: unknown, at: string, visit: (node: Node, at: string) => void): void {
  if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`, visit));
  if (typeof node !== 'object' || node === null) return;
  visit(node as Node, at);
  for (const [k, v] of Object.entries(node)) {
    // enum values are data, not schemas.
    if (k !== 'enum') walk(v, `${at}/${k}`, visit);
  }
}

// The keywords of apiextensions.k8s.io/v1 JSONSchemaProps that a structural schema may use.
const structuralKeywords = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
const forbiddenInJunctors = [
  'type',
  'description',
  'default',
  'additionalProperties',
  'nullable',
  'title',
  'x-kubernetes-preserve-unknown-fields',
];

// Schema nodes only: walks properties, items and additionalProperties, so property names are never read as keywords.
function structuralViolations(node: Node, at: string, level: 'root' | 'field'): string[] {
  const out: string[] = [];
  for (const k of Object.keys(node)) if (!structuralKeywords.has(k)) out.push(`${at}: keyword ${k}`);
  if (
    node.type === undefined &&
    !node['x-kubernetes-preserve-unknown-fields'] &&
    !node['x-kubernetes-int-or-string']
  ) {
    out.push(`${at}: no type`);
  }
  if (level === 'root' && node.type !== 'object') out.push(`${at}: root must be an object`);
  if (node.properties && node.additionalProperties !== undefined)
    out.push(`${at}: properties with additionalProperties`);
  if (node.type === 'array' && node.items === undefined) out.push(`${at}: array without items`);
  if (node.uniqueItems === true) out.push(`${at}: uniqueItems`);
  for (const j of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const [i, branch] of ((node[j] ?? []) as Node[]).entries()) {
      for (const k of forbiddenInJunctors)
        if (k in branch) out.push(`${at}/${j}/${i}: ${k} inside a junctor`);
    }
  }
  for (const [name, sub] of Object.entries((node.properties ?? {}) as Record<string, Node>)) {
    out.push(...structuralViolations(sub, `${at}/properties/${name}`, 'field'));
  }
  if (typeof node.items === 'object')
    out.push(...structuralViolations(node.items as Node, `${at}/items`, 'field'));
  if (typeof node.additionalProperties === 'object') {
    out.push(
      ...structuralViolations(node.additionalProperties as Node, `${at}/additionalProperties`, 'field'),
    );
  }
  return out;
}

// Ajv stands in for the apiserver's validator: it needs to be told about the vendor extensions, and
// Ajv's nullable needs a type beside it where Kubernetes' does not (no type already admits null).
function crdValidator(openAPIV3Schema: Node) {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajvFormats.default(ajv);
  for (const k of ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string']) ajv.addKeyword(k);
  const copy = structuredClone(openAPIV3Schema);
  walk(copy, '', (n) => {
    if (n.nullable === true && n.type === undefined) delete n.nullable;
  });
  return ajv.compile(copy);
}

// What the apiserver does to a stored object before validating it: drops unknown fields where the schema does
// not preserve them, and nulls where the schema does not allow them (defaulting/prunenulls.go).
function apiserverPrune(value: unknown, s: Node | undefined): unknown {
  if (s === undefined) return value;
  if (Array.isArray(value)) return value.map((v) => apiserverPrune(v, s.items as Node | undefined));
  if (typeof value !== 'object' || value === null) return value;
  const props = s.properties as Record<string, Node> | undefined;
  const map = typeof s.additionalProperties === 'object' ? (s.additionalProperties as Node) : undefined;
  const keepsUnknown = s['x-kubernetes-preserve-unknown-fields'] === true;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = props?.[k] ?? map;
    if (sub === undefined && !keepsUnknown) continue;
    if (v === null && sub !== undefined && sub.nullable !== true) continue;
    out[k] = apiserverPrune(v, sub);
  }
  return out;
}

describe('unitSignalCrd', () => {
  const yaml = unitSignalCrd(schema, 'example.com');
  const crd = parse(yaml) as {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    spec: {
      group: string;
      scope: string;
      names: Record<string, string>;
      versions: {
        name: string;
        served: boolean;
        storage: boolean;
        subresources: Node;
        additionalPrinterColumns: Node[];
        schema: { openAPIV3Schema: Node };
      }[];
    };
  };
  const version = crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema;
  const specSchema = (root.properties as Record<string, Node>).spec!;
  const statusSchema = (root.properties as Record<string, Node>).status!;

  it('is a v1 CRD for units.<domain>/v1 UnitSignal with a status subresource', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe('unitsignals.units.example.com');
    expect(crd.spec.group).toBe('units.example.com');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      kind: 'UnitSignal',
      plural: 'unitsignals',
      singular: 'unitsignal',
      listKind: 'UnitSignalList',
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Generation',
      'Observed',
      'Draining',
      'Age',
    ]);
  });

  it('is deterministic and rejects a bad domain', () => {
    expect(unitSignalCrd(schema, 'example.com')).toBe(yaml);
    expect(unitSignalCrd(schema, 'other.test')).toContain('group: units.other.test');
    expect(() => unitSignalCrd(schema, 'Not A Domain')).toThrow(/domain/);
    expect(() => unitSignalCrd(schema, '')).toThrow(/domain/);
  });

  it('uses only the structural subset Kubernetes accepts', () => {
    expect(structuralViolations(root, 'openAPIV3Schema', 'root')).toEqual([]);
    const keys = new Set<string>();
    walk(root, '', (n) => Object.keys(n).forEach((k) => keys.add(k)));
    for (const k of ['$schema', '$id', '$ref', '$defs', 'definitions', 'const', 'propertyNames', 'oneOf'])
      expect(keys).not.toContain(k);
  });

  it('keeps unknown spec fields, types status, and expresses nulls and unions as Kubernetes does', () => {
    const props = specSchema.properties as Record<string, Node>;
    expect(specSchema['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(specSchema.required).toEqual(['unitId', 'key', 'contractVersion', 'generation']);
    expect(props.contractVersion).toMatchObject({ type: 'integer', enum: [1] });
    expect(props.draining).toMatchObject({
      'x-kubernetes-preserve-unknown-fields': true,
      enum: [false, 'stop', 'destroy', 'replace', 'scale_down'],
    });
    expect(props.allocation).toMatchObject({
      type: 'object',
      nullable: true,
      required: ['id', 'generation'],
    });
    expect(props.userData).toMatchObject({ 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
    expect(props.labels).toMatchObject({
      type: 'object',
      maxProperties: 16,
      additionalProperties: { type: 'string', maxLength: 64 },
    });
    expect(statusSchema.properties).toMatchObject({
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    });
  });

  // Compiled on first use so that a bad translation fails its tests, not the collection of this file.
  let compiled: { spec: ValidateFunction; object: ValidateFunction } | undefined;
  const validators = () => (compiled ??= { spec: crdValidator(specSchema), object: crdValidator(root) });
  const validateSpec = (v: unknown) => validators().spec(v);
  const samples = valid.map(([name, { given }]) => [name, asJson(given)] as const);

  it.each(samples)('stores and admits the valid sample "%s" unchanged', (_name, given) => {
    const stored = apiserverPrune(given, specSchema);
    expect(stored).toEqual(given);
    expect(validateSpec(stored), JSON.stringify(validators().spec.errors)).toBe(true);
  });

  it('admits a whole UnitSignal object with status', () => {
    const object = {
      apiVersion: 'units.example.com/v1',
      kind: 'UnitSignal',
      metadata: { name: 'u1' },
      spec: full,
      status: { observedGeneration: 7 },
    };
    const { object: validateObject } = validators();
    expect(validateObject(object), JSON.stringify(validateObject.errors)).toBe(true);
    expect(validateObject({ ...object, status: { observedGeneration: -1 } })).toBe(false);
  });

  // Label names are not expressible in a structural schema (see scripts/gen/unit-signal.ts), so those cases are
  // left to the agent; a null where null is not allowed is dropped by the apiserver rather than refused.
  const agentOnly = new Set([
    'label name uppercase',
    'label name trailing dot',
    'label name with slash',
    'label name empty',
    'label name 33 chars',
  ]);
  const prunedNulls = new Set(['draining null', 'label value null']);
  const shared = invalid.filter(
    ([name]) => !agentOnly.has(name) && !prunedNulls.has(name) && name !== 'not an object',
  );

  it.each(shared.map(([name, { given }]) => [name, asJson(given)] as const))(
    'refuses the invalid sample "%s"',
    (_name, given) => {
      expect(validateSpec(apiserverPrune(given, specSchema))).toBe(false);
    },
  );

  it.each([...prunedNulls])('drops the null of "%s" instead of refusing it', (name) => {
    const given = asJson(invalid.find(([n]) => n === name)![1].given);
    const stored = apiserverPrune(given, specSchema);
    expect(stored).not.toEqual(given);
    expect(validateSpec(stored)).toBe(true);
    expect(validateUnitSignal(stored).ok).toBe(true);
  });

  it.each([...agentOnly])('leaves "%s" to the agent', (name) => {
    const given = asJson(invalid.find(([n]) => n === name)![1].given);
    expect(validateSpec(given)).toBe(true);
    expect(validateUnitSignal(given).ok).toBe(false);
  });
});
