// What the agent does with a new UnitSignal spec (seed "UnitSignal contract"): a spec that fails
// validation is refused and the previous contract stays; unknown fields are ignored, not errors (an
// older agent must accept a newer platform's spec); generations only go up. Pure, so it is tested by table.
import { readFileSync } from 'node:fs';
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';
import type { UnitSignalError } from '../substrate/driver.js';
import { validateUnitSignal } from '../substrate/unit-signal.js';

export type Decision =
  | { kind: 'apply'; spec: UnitSignalSpec }
  /** generation: the refused spec's own, or -1 when it has none that is an integer. */
  | { kind: 'refuse'; generation: number; errors: UnitSignalError[] };

interface Schema {
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
}

const schema = JSON.parse(
  readFileSync(new URL('../../../spec/unit-signal.schema.json', import.meta.url), 'utf8'),
) as Schema;

/**
 * @param text the file's content
 * @param observedGeneration the generation last acknowledged (null before the first)
 * @param previous the contract in force, whose allocation's first-sight stamp a new spec keeps
 */
export function decide(
  text: string,
  observedGeneration: number | null,
  previous: UnitSignalSpec | null,
  now: Date,
): Decision {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: not for a log.
    return { kind: 'refuse', generation: -1, errors: [{ pointer: '', message: 'is not valid JSON' }] };
  }
  const result = validateUnitSignal(value);
  if (!result.ok) return { kind: 'refuse', generation: generationOf(value), errors: result.errors };
  const { generation } = result.spec;
  if (observedGeneration !== null && generation < observedGeneration) {
    const message = `must not be lower than the acknowledged generation ${observedGeneration} (the platform only raises it)`;
    return { kind: 'refuse', generation, errors: [{ pointer: '/generation', message }] };
  }
  return { kind: 'apply', spec: stampAllocation(knownFields(result.spec), previous, now) };
}

/** The spec with only the fields the schema names, at every level (maps such as labels stay whole). */
export function knownFields(spec: UnitSignalSpec): UnitSignalSpec {
  return prune(spec, schema) as UnitSignalSpec;
}

function prune(value: unknown, at: Schema): unknown {
  if (Array.isArray(value)) return at.items ? value.map((item) => prune(item, at.items!)) : value;
  if (
    value === null ||
    typeof value !== 'object' ||
    !at.properties ||
    at.additionalProperties !== undefined
  ) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [name, sub] of Object.entries(at.properties)) {
    if (Object.hasOwn(value, name)) out[name] = prune((value as Record<string, unknown>)[name], sub);
  }
  return out;
}

/**
 * An allocation without allocatedAt gets the time the agent first saw it (seed: "the agent stamps first
 * sight when absent"); the same allocation id in a later spec keeps that first stamp.
 */
function stampAllocation(spec: UnitSignalSpec, previous: UnitSignalSpec | null, now: Date): UnitSignalSpec {
  const allocation = spec.allocation;
  if (!allocation || allocation.allocatedAt !== undefined) return spec;
  const seen = previous?.allocation?.id === allocation.id ? previous.allocation.allocatedAt : undefined;
  return { ...spec, allocation: { ...allocation, allocatedAt: seen ?? now.toISOString() } };
}

function generationOf(value: unknown): number {
  const generation = (value as { generation?: unknown } | null)?.generation;
  return typeof generation === 'number' && Number.isInteger(generation) ? generation : -1;
}
