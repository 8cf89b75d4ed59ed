// Codegen for the UnitSignal contract: TypeScript types and the Kubernetes CRD, both derived from
// spec/unit-signal.schema.json. Pure functions: the caller reads the schema, adds the header and writes files.
import { compile } from 'json-schema-to-typescript';
import { stringify } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = { [k: string]: Json };

export async function unitSignalTypes(schema: object): Promise<string> {
  const input = markUntyped(structuredClone(schema) as Json);
  const ts = await compile(input as Parameters<typeof compile>[0], 'UnitSignalSpec', {
    bannerComment: '',
    // The schema admits unknown fields (the agent ignores them), but the types describe what the platform
    // writes: index signatures would hide typos in the fields we do know.
    additionalProperties: false,
    // UnitSignalStatus lives in $defs and nothing in the spec refers to it.
    unreachableDefinitions: true,
    style: { singleQuote: true, printWidth: 110, trailingComma: 'all' },
  });
  return ts.trim() + '\n';
}

// json-schema-to-typescript reads a schema that has a description but no type as an object;
// "any JSON value" (userData) must come out as unknown.
function markUntyped(node: Json): Json {
  if (Array.isArray(node)) return node.map(markUntyped);
  if (node === null || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) out[k] = markUntyped(v);
  const shaping = ['type', 'const', 'enum', 'anyOf', 'oneOf', 'allOf', '$ref', 'properties', 'items'];
  if ('description' in out && !shaping.some((k) => k in out)) out.tsType = 'unknown';
  return out;
}

const dnsName = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function unitSignalCrd(schema: object, domain: string): string {
  if (!dnsName.test(domain))
    throw new Error(`unitSignalCrd: domain ${JSON.stringify(domain)} is not a DNS name`);
  const root = schema as Schema;
  const status = ((root.$defs ?? {}) as Schema).UnitSignalStatus;
  if (!isSchema(status)) throw new Error('unitSignalCrd: $defs.UnitSignalStatus is missing');
  const group = `units.${domain}`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `unitsignals.${group}` },
    spec: {
      group,
      names: {
        kind: 'UnitSignal',
        listKind: 'UnitSignalList',
        plural: 'unitsignals',
        singular: 'unitsignal',
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Generation', type: 'integer', jsonPath: '.spec.generation' },
            { name: 'Observed', type: 'integer', jsonPath: '.status.observedGeneration' },
            // string, not boolean: the value is false or a reason, and string columns print either.
            { name: 'Draining', type: 'string', jsonPath: '.spec.draining' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              description:
                'UnitSignal carries the per-unit contract the platform writes and the agent in the unit reads.',
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: toStructural(root, 'spec'),
                status: toStructural(status, 'status'),
              },
            },
          },
        },
      ],
    },
  };
  return stringify(crd, { aliasDuplicateObjects: false, lineWidth: 0 });
}

function isSchema(v: Json | undefined): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Dropped on purpose: identifiers and titles mean nothing to Kubernetes. propertyNames has no structural
// equivalent, and a CEL rule over map keys is priced by the apiserver at the request-size bound and would be
// refused; label names are enforced by the agent's validator, which is the one that decides.
const dropped = new Set(['$schema', '$id', '$defs', '$comment', 'title', 'propertyNames']);
const copied = ['minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum'];
const copiedShape = ['minItems', 'maxItems', 'minProperties', 'maxProperties', 'required'];
const handled = new Set([
  ...dropped,
  ...copied,
  ...copiedShape,
  'description',
  'type',
  'const',
  'enum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'items',
]);
const int32 = 2 ** 31;

// Translates one JSON Schema node into the structural subset: one type per node, no type inside junctors,
// null expressed as nullable. Anything it cannot translate faithfully throws, so codegen fails loudly.
function toStructural(s: Schema, at: string): Schema {
  for (const k of Object.keys(s))
    if (!handled.has(k)) throw new Error(`unitSignalCrd: ${at}: cannot translate "${k}"`);
  let types = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : [];
  let values: Json[] | undefined = 'const' in s ? [s.const as Json] : (s.enum as Json[] | undefined);
  let nullable = types.includes('null');
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) {
    if (values) throw new Error(`unitSignalCrd: ${at}: enum together with anyOf/oneOf`);
    const branches = alternatives.map((b, i) => valueBranch(b, `${at}.anyOf[${i}]`));
    nullable ||= branches.some((b) => b.types.includes('null'));
    if (types.length === 0) types = [...new Set(branches.flatMap((b) => b.types))];
    values = branches.flatMap((b) => b.values);
  }
  if (values) {
    nullable ||= values.includes(null);
    values = values.filter((v) => v !== null);
  }
  types = types.filter((t) => t !== 'null');
  const untyped = types.length === 0 && !values;
  if (types.length > 1 && !values) throw new Error(`unitSignalCrd: ${at}: a union of types needs an enum`);

  const out: Schema = {};
  if ('description' in s) out.description = s.description as Json;
  if (types.length === 1) out.type = types[0] as string;
  // No single type fits (any JSON value, or false-or-string): Kubernetes only accepts a typeless field
  // when it preserves unknown fields; the enum, if any, still constrains the value.
  else out['x-kubernetes-preserve-unknown-fields'] = true;
  if (values) out.enum = values;
  // Kubernetes prunes a null it was not told to expect, so "null for none" must be declared.
  if (nullable || untyped) out.nullable = true;
  for (const k of copied) if (k in s) out[k] = s[k] as Json;
  if (out.type === 'integer' && !('format' in out)) out.format = fitsInt32(s) ? 'int32' : 'int64';
  for (const k of copiedShape) if (k in s) out[k] = s[k] as Json;

  if (isSchema(s.properties)) {
    if (isSchema(s.additionalProperties))
      throw new Error(`unitSignalCrd: ${at}: properties with a map schema`);
    const props: Schema = {};
    for (const [name, sub] of Object.entries(s.properties)) {
      if (!isSchema(sub)) throw new Error(`unitSignalCrd: ${at}.${name}: boolean schema`);
      props[name] = toStructural(sub, `${at}.${name}`);
    }
    out.properties = props;
    // The agent ignores unknown fields; pruning them here would make the stored object disagree with the spec
    // a newer platform wrote.
    if (s.additionalProperties !== false) out['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (isSchema(s.additionalProperties)) {
    out.additionalProperties = toStructural(s.additionalProperties, `${at}.*`);
  }
  if (isSchema(s.items)) out.items = toStructural(s.items, `${at}[]`);
  else if (types.includes('array')) throw new Error(`unitSignalCrd: ${at}: array without one items schema`);
  return out;
}

function valueBranch(b: Json, at: string): { types: string[]; values: Json[] } {
  if (!isSchema(b)) throw new Error(`unitSignalCrd: ${at}: boolean schema`);
  const extra = Object.keys(b).filter((k) => !['type', 'const', 'enum', 'description'].includes(k));
  if (extra.length)
    throw new Error(`unitSignalCrd: ${at}: only value alternatives translate, found ${extra.join(', ')}`);
  const types = typeof b.type === 'string' ? [b.type] : [];
  if (b.type === 'null') return { types, values: [null] };
  const values = 'const' in b ? [b.const as Json] : (b.enum as Json[] | undefined);
  if (!values) throw new Error(`unitSignalCrd: ${at}: alternative without const or enum`);
  return { types, values };
}

function fitsInt32(s: Schema): boolean {
  return (
    typeof s.minimum === 'number' && typeof s.maximum === 'number' && s.minimum >= -int32 && s.maximum < int32
  );
}
