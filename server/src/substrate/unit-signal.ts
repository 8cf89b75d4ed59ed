// The agent-side check of a UnitSignal spec. The agent refuses a spec that fails it and keeps the previous
// contract, so the errors name the offending field as a JSON pointer for the agent's log.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';

export type UnitSignalError = { pointer: string; message: string };
export type UnitSignalResult = { ok: true; spec: UnitSignalSpec } | { ok: false; errors: UnitSignalError[] };

const schema: unknown = JSON.parse(
  readFileSync(new URL('../../../spec/unit-signal.schema.json', import.meta.url), 'utf8'),
);

// allErrors: a refused spec should be fixable in one round, not one field at a time.
// verbose: the anyOf error needs its alternatives to say which values are allowed.
const ajv = new Ajv2020({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true });
// ajv-formats is CommonJS: NodeNext types its default import as module.exports, whose .default is the plugin
// (at run time too, since the plugin carries itself as .default).
ajvFormats.default(ajv, ['date-time']);
const check = ajv.compile<UnitSignalSpec>(schema as object);

export function validateUnitSignal(value: unknown): UnitSignalResult {
  if (check(value)) return { ok: true, spec: value };
  return { ok: false, errors: toErrors(check.errors ?? []) };
}

function toErrors(raw: ErrorObject[]): UnitSignalError[] {
  // An anyOf reports every failed alternative; one error saying what is allowed reads better.
  const junctions = raw
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.schemaPath + '/');
  const out: UnitSignalError[] = [];
  const seen = new Set<string>();
  for (const e of raw) {
    if (junctions.some((p) => e.schemaPath.startsWith(p))) continue;
    // The inner error of propertyNames already names the property; the wrapper adds nothing.
    if (e.keyword === 'propertyNames') continue;
    const err = describe(e);
    const id = `${err.pointer}\u0000${err.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(err);
  }
  return out;
}

function describe(e: ErrorObject): UnitSignalError {
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return { pointer: `${e.instancePath}/${escape(missing)}`, message: 'is required' };
  }
  if (e.propertyName !== undefined) {
    return {
      pointer: `${e.instancePath}/${escape(e.propertyName)}`,
      message: `property name ${e.message ?? 'is invalid'}`,
    };
  }
  if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
    const allowed = allowedValues(e.schema);
    if (allowed) return { pointer: e.instancePath, message: `must be one of ${allowed}` };
  }
  return { pointer: e.instancePath, message: e.message ?? 'is invalid' };
}

function allowedValues(alternatives: unknown): string | undefined {
  if (!Array.isArray(alternatives)) return undefined;
  const values: unknown[] = [];
  for (const alt of alternatives as Record<string, unknown>[]) {
    if ('const' in alt) values.push(alt.const);
    else if (Array.isArray(alt.enum)) values.push(...(alt.enum as unknown[]));
    else return undefined;
  }
  return values.map((v) => JSON.stringify(v)).join(', ');
}

function escape(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}
