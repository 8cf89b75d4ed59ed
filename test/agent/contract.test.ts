// The agent's decision on a new contract file: apply (unknown fields dropped, allocation stamped) or
// refuse (with the pointer of what is wrong), by table.
import { describe, expect, it } from 'vitest';
import type { UnitSignalSpec } from '../../generated/unit-signal.js';
import { decide, type Decision } from '../../server/src/agent/contract.js';

const now = new Date('2025-01-02T03:04:05.000Z');
const base = { unitId: 'unit-1', key: 'web', contractVersion: 1, generation: 4 };
const endpoint = { protocols: ['tcp'], internal_port: 25565, address: '203.0.113.7:31000' };
const seenAllocation = { id: 'alloc-1', generation: 1, allocatedAt: '2024-12-31T00:00:00.000Z' };
const previous = { ...base, generation: 3, allocation: seenAllocation } as UnitSignalSpec;

type Case = [string, { given: string; observed?: number | null; want: Decision }];
const apply = (spec: object): Decision => ({ kind: 'apply', spec: spec as UnitSignalSpec });
const refuse = (generation: number, ...errors: [string, string | RegExp][]): Decision =>
  ({
    kind: 'refuse',
    generation,
    errors: errors.map(([pointer, message]) => ({
      pointer,
      message: typeof message === 'string' ? message : expect.stringMatching(message),
    })),
  }) as Decision;
const json = (value: unknown) => JSON.stringify(value);

const cases: Case[] = [
  ['a valid spec', { given: json(base), want: apply(base) }],
  [
    'the first spec, nothing observed yet',
    { given: json({ ...base, generation: 0 }), observed: null, want: apply({ ...base, generation: 0 }) },
  ],
  [
    'the same generation again (an agent restart)',
    { given: json({ ...base, generation: 3 }), want: apply({ ...base, generation: 3 }) },
  ],
  [
    'unknown fields dropped at every level, labels and userData kept whole',
    {
      given: json({
        ...base,
        extra: 1,
        labels: { tier: 'game' },
        userData: { any: { shape: [1, { x: null }] } },
        allocation: { id: 'alloc-2', generation: 2, allocatedAt: '2025-01-01T00:00:00Z', zone: 'z' },
        publicEndpoints: [{ ...endpoint, weight: 1 }],
      }),
      want: apply({
        ...base,
        labels: { tier: 'game' },
        userData: { any: { shape: [1, { x: null }] } },
        allocation: { id: 'alloc-2', generation: 2, allocatedAt: '2025-01-01T00:00:00Z' },
        publicEndpoints: [endpoint],
      }),
    },
  ],
  [
    'a new allocation without allocatedAt is stamped with first sight',
    {
      given: json({ ...base, allocation: { id: 'alloc-2', generation: 1 } }),
      want: apply({ ...base, allocation: { id: 'alloc-2', generation: 1, allocatedAt: now.toISOString() } }),
    },
  ],
  [
    'the same allocation keeps the stamp of its first sight',
    {
      given: json({ ...base, allocation: { id: 'alloc-1', generation: 2 } }),
      want: apply({ ...base, allocation: { ...seenAllocation, generation: 2 } }),
    },
  ],
  [
    'allocation null',
    { given: json({ ...base, allocation: null }), want: apply({ ...base, allocation: null }) },
  ],
  ['not JSON', { given: '{"generation": 5,', want: refuse(-1, ['', 'is not valid JSON']) }],
  ['JSON that is not an object', { given: '[1,2]', want: refuse(-1, ['', 'must be object']) }],
  ['a bad key', { given: json({ ...base, key: 'Bad Key' }), want: refuse(4, ['/key', /pattern/]) }],
  [
    'several faults at once',
    {
      given: json({ ...base, generation: 6, draining: 'pause', labels: { 'Bad Name': 'x' } }),
      want: refuse(6, ['/labels/Bad Name', /pattern/], ['/draining', /must be one of/]),
    },
  ],
  [
    'a generation that is not an integer',
    { given: json({ ...base, generation: 4.5 }), want: refuse(-1, ['/generation', 'must be integer']) },
  ],
  [
    'a generation lower than acknowledged',
    {
      given: json({ ...base, generation: 2 }),
      want: refuse(2, ['/generation', /lower than the acknowledged generation 3/]),
    },
  ],
];

describe('decide', () => {
  it.each(cases)('%s', (_name, { given, observed = 3, want }) => {
    const got = decide(given, observed, previous, now);
    if (want.kind === 'apply') {
      // undefined in a want means "absent".
      expect(got).toEqual(JSON.parse(JSON.stringify(want)));
    } else {
      expect(got).toEqual({ ...want, errors: expect.arrayContaining(want.errors) });
      expect(got.kind === 'refuse' && got.errors).toHaveLength(want.errors.length);
    }
  });
});
