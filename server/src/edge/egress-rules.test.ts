// The egress rules as iptables rules, table-tested: order kept, each action and protocol, the cidr an
// IPv4-only match (left out of IPv6), and the chain replaced whole in one restore.
import { describe, expect, it } from 'vitest';
import { chainRules, restoreScript, unitChain, type EgressRule } from './egress-rules.js';

const rule = (r: Partial<EgressRule>): EgressRule => ({
  action: 'block',
  protocol: 'any',
  cidr: null,
  port_from: null,
  port_to: null,
  ...r,
});

describe('chainRules', () => {
  const cases: [string, EgressRule, string[], string[]][] = [
    [
      'tcp block to one address and port range',
      rule({ protocol: 'tcp', cidr: '10.1.2.0/24', port_from: 80, port_to: 443 }),
      ['-A C -d 10.1.2.0/24 -p tcp -m tcp --dport 80:443 -j REJECT --reject-with tcp-reset'],
      [],
    ],
    [
      'udp allow to any address',
      rule({ action: 'allow', protocol: 'udp', port_from: 53, port_to: 53 }),
      ['-A C -p udp -m udp --dport 53:53 -j RETURN'],
      ['-A C -p udp -m udp --dport 53:53 -j RETURN'],
    ],
    ['icmp block', rule({ protocol: 'icmp' }), ['-A C -p icmp -j REJECT'], ['-A C -p ipv6-icmp -j REJECT']],
    [
      'any block: tcp reset, the rest port-unreachable',
      rule({}),
      ['-A C -p tcp -j REJECT --reject-with tcp-reset', '-A C -j REJECT'],
      ['-A C -p tcp -j REJECT --reject-with tcp-reset', '-A C -j REJECT'],
    ],
    [
      'any allow to a network',
      rule({ action: 'allow', cidr: '192.168.0.0/16' }),
      ['-A C -d 192.168.0.0/16 -j RETURN'],
      [],
    ],
  ];
  it.each(cases)('%s', (_name, input, v4, v6) => {
    expect(chainRules('C', [input], 4).map((l) => l.join(' '))).toEqual(v4);
    expect(chainRules('C', [input], 6).map((l) => l.join(' '))).toEqual(v6);
  });

  it('keeps the evaluation order', () => {
    const lines = chainRules(
      'C',
      [rule({ action: 'allow', cidr: '127.0.0.2/32' }), rule({ cidr: '127.0.0.0/8' })],
      4,
    ).map((l) => l.join(' '));
    expect(lines).toEqual([
      '-A C -d 127.0.0.2/32 -j RETURN',
      '-A C -d 127.0.0.0/8 -p tcp -j REJECT --reject-with tcp-reset',
      '-A C -d 127.0.0.0/8 -j REJECT',
    ]);
  });
});

describe('unitChain and restoreScript', () => {
  it('names a chain within iptables limits, the same for the same unit', () => {
    const id = '43ad029b-1014-4e80-832c-43e6d95807b5';
    expect(unitChain(id)).toBe(unitChain(id));
    expect(unitChain(id)).not.toBe(unitChain('53ad029b-1014-4e80-832c-43e6d95807b5'));
    expect(unitChain(id).length).toBeLessThanOrEqual(28);
  });

  it('declares, flushes and refills the chain in one transaction', () => {
    expect(restoreScript('C', [['-A', 'C', '-j', 'RETURN']])).toBe(
      '*filter\n:C - [0:0]\n-F C\n-A C -j RETURN\nCOMMIT\n',
    );
  });
});
