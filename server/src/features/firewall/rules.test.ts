// The firewall's value rules, table-driven: [name, { given, want }].
import { describe, expect, it } from 'vitest';
import {
  canonicalCidr,
  checkRule,
  evaluationOrder,
  mergeUpdate,
  overCeiling,
  type RuleInput,
  type RuleValues,
} from './rules.js';

const tcp: RuleInput = {
  action: 'block',
  direction: 'ingress',
  protocol: 'tcp',
  priority: 10,
  port_from: 22,
  port_to: 22,
};

const CASES: [string, { given: RuleInput; want: Partial<RuleValues> | string[] }][] = [
  ['tcp with a range', { given: tcp, want: { port_from: 22, port_to: 22, cidr: null, enabled: true } }],
  [
    'udp range',
    {
      given: { ...tcp, protocol: 'udp', port_from: 1, port_to: 65535 },
      want: { port_from: 1, port_to: 65535 },
    },
  ],
  [
    'tcp without a range',
    { given: { ...tcp, port_from: undefined, port_to: undefined }, want: ['/port_from', '/port_to'] },
  ],
  ['tcp with only port_from', { given: { ...tcp, port_to: null }, want: ['/port_to'] }],
  ['port 0', { given: { ...tcp, port_from: 0 }, want: ['/port_from'] }],
  ['port 65536', { given: { ...tcp, port_to: 65536 }, want: ['/port_to'] }],
  ['from above to', { given: { ...tcp, port_from: 100, port_to: 99 }, want: ['/port_to'] }],
  [
    'icmp with no range',
    {
      given: { ...tcp, protocol: 'icmp', port_from: null, port_to: null },
      want: { port_from: null, port_to: null },
    },
  ],
  ['icmp with a range', { given: { ...tcp, protocol: 'icmp' }, want: ['/port_from', '/port_to'] }],
  [
    'any with port_to only',
    { given: { ...tcp, protocol: 'any', port_from: undefined, port_to: 80 }, want: ['/port_to'] },
  ],
  ['cidr canonicalised', { given: { ...tcp, cidr: '10.1.2.3/24' }, want: { cidr: '10.1.2.0/24' } }],
  ['cidr /8', { given: { ...tcp, cidr: '10.200.0.1/8' }, want: { cidr: '10.0.0.0/8' } }],
  ['bare address is /32', { given: { ...tcp, cidr: ' 192.168.1.7 ' }, want: { cidr: '192.168.1.7/32' } }],
  ['blank cidr is any', { given: { ...tcp, cidr: '  ' }, want: { cidr: null } }],
  ['null cidr is any', { given: { ...tcp, cidr: null }, want: { cidr: null } }],
  ['cidr broader than /8', { given: { ...tcp, cidr: '10.0.0.0/7' }, want: ['/cidr'] }],
  ['cidr /0', { given: { ...tcp, cidr: '0.0.0.0/0' }, want: ['/cidr'] }],
  ['cidr IPv6', { given: { ...tcp, cidr: '2001:db8::/32' }, want: ['/cidr'] }],
  ['cidr octet 256', { given: { ...tcp, cidr: '10.0.0.256/32' }, want: ['/cidr'] }],
  ['cidr leading zero', { given: { ...tcp, cidr: '10.0.0.01/32' }, want: ['/cidr'] }],
  ['cidr prefix 33', { given: { ...tcp, cidr: '10.0.0.0/33' }, want: ['/cidr'] }],
  ['cidr two slashes', { given: { ...tcp, cidr: '10.0.0.0/8/8' }, want: ['/cidr'] }],
  ['priority negative', { given: { ...tcp, priority: -1 }, want: ['/priority'] }],
  ['priority 65536', { given: { ...tcp, priority: 65536 }, want: ['/priority'] }],
  ['description trimmed', { given: { ...tcp, description: '  ssh  ' }, want: { description: 'ssh' } }],
  ['description blank is none', { given: { ...tcp, description: ' ' }, want: { description: null } }],
  [
    'description with a control character',
    { given: { ...tcp, description: 'a\u0007b' }, want: ['/description'] },
  ],
  ['description too long', { given: { ...tcp, description: 'x'.repeat(256) }, want: ['/description'] }],
  ['disabled kept', { given: { ...tcp, enabled: false }, want: { enabled: false } }],
  [
    'every problem at once',
    { given: { ...tcp, port_from: 0, cidr: 'x', priority: -5 }, want: ['/port_from', '/priority', '/cidr'] },
  ],
];

describe('checkRule', () => {
  it.each(CASES)('%s', (_name, { given, want }) => {
    const got = checkRule(given);
    if (Array.isArray(want)) {
      expect(got.ok).toBe(false);
      expect(got.ok ? [] : got.problems.map((p) => p.pointer)).toEqual(want);
    } else {
      expect(got).toMatchObject({ ok: true, rule: want });
    }
  });
});

describe('canonicalCidr', () => {
  it.each([
    ['172.16.5.4/12', '172.16.0.0/12'],
    ['127.0.0.2/32', '127.0.0.2/32'],
    ['255.255.255.255/9', '255.128.0.0/9'],
  ])('%s → %s', (given, want) => expect(canonicalCidr(given)).toEqual({ cidr: want }));
});

describe('mergeUpdate', () => {
  const stored: RuleValues = {
    ...(checkRule({ ...tcp, cidr: '10.0.0.0/8', description: 'x' }) as { rule: RuleValues }).rule,
  };
  it.each([
    ['absent keeps', {}, { cidr: '10.0.0.0/8', description: 'x' }],
    ['null clears', { cidr: null, description: null }, { cidr: null, description: null }],
    ['a value replaces', { priority: 3, enabled: false }, { priority: 3, enabled: false }],
  ])('%s', (_name, update, want) => expect(mergeUpdate(stored, update)).toMatchObject(want));
  it('validates the result whole: a range cleared on a tcp rule is refused', () => {
    const merged = mergeUpdate(stored, { port_from: null, port_to: null });
    expect(checkRule(merged)).toMatchObject({ ok: false });
    expect(checkRule(mergeUpdate(stored, { protocol: 'any', port_from: null, port_to: null }))).toMatchObject(
      { ok: true },
    );
  });
});

describe('ceiling and order', () => {
  it('counts directions apart', () => {
    const ingress = Array.from({ length: 50 }, () => ({ direction: 'ingress' as const }));
    expect(overCeiling([...ingress, ...ingress.map(() => ({ direction: 'egress' as const }))])).toBeNull();
    expect(overCeiling([...ingress, { direction: 'ingress' }])).toBe('ingress');
  });
  it('orders ingress before egress, then by priority, then by age', () => {
    const at = (s: number) => new Date(1_700_000_000_000 + s * 1000);
    const rules = [
      { id: 'e1', direction: 'egress' as const, priority: 1, created_at: at(0) },
      { id: 'i2', direction: 'ingress' as const, priority: 5, created_at: at(2) },
      { id: 'i1', direction: 'ingress' as const, priority: 5, created_at: at(1) },
      { id: 'i0', direction: 'ingress' as const, priority: 100, created_at: at(0) },
    ];
    expect(evaluationOrder(rules).map((r) => r.id)).toEqual(['i1', 'i2', 'i0', 'e1']);
  });
});
