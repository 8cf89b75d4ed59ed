// The kernel path's rules, table-tested: the ingress rules in order with each action and protocol (icmp
// left out, `any` as tcp and udp, a cidr's network and prefix), the allocations matched on both their
// original and current destination, the DNAT per allocation, and the three chains replaced in one restore
// with the filter table first.
import { describe, expect, it } from 'vitest';
import { compileRule } from './firewall.js';
import {
  allocationsJump,
  firewallLines,
  unitChains,
  unitRestoreScript,
  type KernelUnit,
} from './kernel-rules.js';

const UNIT = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('firewallLines', () => {
  const rule = (r: Partial<Parameters<typeof compileRule>[0]>) =>
    compileRule({ action: 'block', protocol: 'any', cidr: null, port_from: null, port_to: null, ...r });
  const cases: [string, ReturnType<typeof rule>[], string[]][] = [
    ['no rules: everything allowed', [], ['-A F -j ACCEPT']],
    [
      'tcp block of one address on one port: reset',
      [rule({ protocol: 'tcp', cidr: '127.0.0.2/32', port_from: 22, port_to: 22 })],
      ['-A F -s 127.0.0.2/32 -p tcp -m tcp --dport 22 -j REJECT --reject-with tcp-reset', '-A F -j ACCEPT'],
    ],
    [
      'udp block of a network on a range: dropped',
      [rule({ protocol: 'udp', cidr: '10.9.0.0/16', port_from: 27960, port_to: 27970 })],
      ['-A F -s 10.9.0.0/16 -p udp -m udp --dport 27960:27970 -j DROP', '-A F -j ACCEPT'],
    ],
    [
      'any allow before a broad block: first match decides, in order',
      [
        rule({ action: 'allow', cidr: '127.0.0.2/32' }),
        rule({ cidr: '127.0.0.0/8', port_from: 22, port_to: 22 }),
      ],
      [
        '-A F -s 127.0.0.2/32 -p tcp -j ACCEPT',
        '-A F -s 127.0.0.2/32 -p udp -j ACCEPT',
        '-A F -s 127.0.0.0/8 -p tcp -m tcp --dport 22 -j REJECT --reject-with tcp-reset',
        '-A F -s 127.0.0.0/8 -p udp -m udp --dport 22 -j DROP',
        '-A F -j ACCEPT',
      ],
    ],
    ['icmp never matches a forwarded flow', [rule({ protocol: 'icmp' })], ['-A F -j ACCEPT']],
    [
      'a cidr written with host bits matches its network',
      [rule({ protocol: 'tcp', cidr: '192.168.7.9/24' })],
      ['-A F -s 192.168.7.0/24 -p tcp -j REJECT --reject-with tcp-reset', '-A F -j ACCEPT'],
    ],
  ];
  it.each(cases)('%s', (_name, rules, want) => {
    expect(firewallLines('F', rules).map((l) => l.join(' '))).toEqual(want);
  });
});

describe('unitRestoreScript', () => {
  const unit: KernelUnit = {
    unitId: UNIT,
    address: '100.70.1.2',
    ports: [
      { id: 'a1', protocol: 'tcp', externalPort: 20001, targetPort: 22 },
      { id: 'a2', protocol: 'udp', externalPort: 20002, targetPort: 27960 },
    ],
    rules: [],
  };

  it('writes filter then nat, each chain emptied first, for this address only', () => {
    const c = unitChains('127.0.0.1', UNIT);
    expect(c).not.toEqual(unitChains('192.0.2.7', UNIT));
    for (const name of Object.values(c)) expect(name.length).toBeLessThanOrEqual(28);
    expect(unitRestoreScript('127.0.0.1', unit).split('\n')).toEqual([
      '*filter',
      `:${c.firewall} - [0:0]`,
      `:${c.allocations} - [0:0]`,
      `-F ${c.firewall}`,
      `-F ${c.allocations}`,
      `-A ${c.firewall} -j ACCEPT`,
      `-A ${c.allocations} -d 100.70.1.2/32 -p tcp -m tcp --dport 22 -m conntrack --ctorigdst 127.0.0.1/32 --ctorigdstport 20001 -j ${c.firewall}`,
      `-A ${c.allocations} -d 100.70.1.2/32 -p udp -m udp --dport 27960 -m conntrack --ctorigdst 127.0.0.1/32 --ctorigdstport 20002 -j ${c.firewall}`,
      'COMMIT',
      '*nat',
      `:${c.dnat} - [0:0]`,
      `-F ${c.dnat}`,
      `-A ${c.dnat} -d 127.0.0.1/32 -p tcp -m tcp --dport 20001 -m comment --comment allocation:a1 -j DNAT --to-destination 100.70.1.2:22`,
      `-A ${c.dnat} -d 127.0.0.1/32 -p udp -m udp --dport 20002 -m comment --comment allocation:a2 -j DNAT --to-destination 100.70.1.2:27960`,
      'COMMIT',
      '',
    ]);
  });

  it('matches any local address for HOST 0.0.0.0', () => {
    const script = unitRestoreScript('0.0.0.0', unit);
    expect(script).toContain('-m addrtype --dst-type LOCAL -p tcp -m tcp --dport 20001');
    expect(script).not.toContain('--ctorigdst ');
    expect(allocationsJump('0.0.0.0', unit)).toContain(`svc-edge:0.0.0.0:${UNIT}`);
  });
});
