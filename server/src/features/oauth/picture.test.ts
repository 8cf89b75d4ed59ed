// Which addresses a provider picture may be fetched from (picture.ts): public unicast only.
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from './picture.js';

const cases: [string, { given: string; want: boolean }][] = [
  ['public IPv4', { given: '93.184.216.34', want: true }],
  ['loopback', { given: '127.0.0.1', want: false }],
  ['loopback, elsewhere in 127/8', { given: '127.9.9.9', want: false }],
  ['private 10/8', { given: '10.1.2.3', want: false }],
  ['private 172.16/12', { given: '172.31.255.254', want: false }],
  ['just outside 172.16/12', { given: '172.32.0.1', want: true }],
  ['private 192.168/16', { given: '192.168.1.1', want: false }],
  ['link-local (cloud metadata)', { given: '169.254.169.254', want: false }],
  ['carrier-grade NAT', { given: '100.64.0.1', want: false }],
  ['this network', { given: '0.0.0.0', want: false }],
  ['multicast', { given: '224.0.0.1', want: false }],
  ['broadcast', { given: '255.255.255.255', want: false }],
  ['documentation', { given: '203.0.113.7', want: false }],
  ['public IPv6', { given: '2606:4700:4700::1111', want: true }],
  ['IPv6 loopback', { given: '::1', want: false }],
  ['IPv6 unspecified', { given: '::', want: false }],
  ['IPv6 unique local', { given: 'fd00::1', want: false }],
  ['IPv6 link-local', { given: 'fe80::1', want: false }],
  ['IPv4-mapped loopback', { given: '::ffff:127.0.0.1', want: false }],
  ['IPv4-mapped public', { given: '::ffff:93.184.216.34', want: true }],
  ['NAT64 of a private address', { given: '64:ff9b::a00:1', want: false }],
  ['NAT64 of a private address, dotted', { given: '64:ff9b::10.0.0.1', want: false }],
  ['NAT64 of a public address', { given: '64:ff9b::5db8:d822', want: true }],
  ['IPv4-compatible loopback', { given: '::127.0.0.1', want: false }],
  ['IPv4-compatible loopback, in hex', { given: '::7f00:1', want: false }],
  ['IPv4-compatible private, spelled out', { given: '0:0:0:0:0:0:a00:1', want: false }],
  ['IPv4-mapped loopback, in hex', { given: '::ffff:7f00:1', want: false }],
  ['IPv4-mapped public, in hex', { given: '::ffff:5db8:d822', want: true }],
  ['IPv4-translated loopback', { given: '::ffff:0:127.0.0.1', want: false }],
  ['6to4 of loopback', { given: '2002:7f00:1::1', want: false }],
  ['6to4 of a private address', { given: '2002:c0a8:101::', want: false }],
  ['6to4 of a public address', { given: '2002:5db8:d822::1', want: true }],
  ['not an address', { given: 'example.com', want: false }],
];

describe('isPublicAddress', () => {
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(isPublicAddress(given)).toBe(want);
  });
});
