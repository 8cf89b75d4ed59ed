// The preflight before a certificate is asked for (server/src/certificates/preflight.ts) against a real
// DNS server: the name must resolve to the ingress only, and CAA (RFC 8659) must allow our CA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCaa, checkResolvesToIngress } from '../../server/src/certificates/preflight.js';
import { startTestDns, type TestDns } from '../support/dns.js';

let dns: TestDns;
let config: { dnsServers: string[]; dnsTimeoutMs: number };

beforeAll(async () => {
  dns = await startTestDns();
  config = { dnsServers: [dns.server], dnsTimeoutMs: 600 };
});
afterAll(async () => {
  await dns?.close();
});

describe('resolves to the ingress', () => {
  const cases: [string, { given: string[]; want: RegExp | null }][] = [
    ['no address', { given: [], want: /does not resolve/ }],
    ['the ingress only', { given: ['127.0.0.1'], want: null }],
    ['another address too', { given: ['127.0.0.1', '192.0.2.1'], want: /192\.0\.2\.1, not to the ingress/ }],
    ['an IPv6 address elsewhere', { given: ['2001:db8::1'], want: /2001:db8::1/ }],
  ];
  it.each(cases)('%s', async (_name, { given, want }) => {
    const name = `r${given.length}-${given.join('-').replace(/[.:]/g, '')}.example.com`;
    if (given.length > 0) dns.setAddresses(name, ...given);
    const result = await checkResolvesToIngress(config, name, ['127.0.0.1']);
    if (want === null) expect(result).toEqual({ ok: true });
    else expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(want) });
  });

  it('says the servers did not answer when they fail', async () => {
    dns.mode = 'servfail';
    try {
      const result = await checkResolvesToIngress(config, 'broken.example.com', ['127.0.0.1']);
      expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('could not be looked up') });
    } finally {
      dns.mode = 'answer';
    }
  });
});

describe('CAA', () => {
  type Caa = { flags?: number; tag: string; value: string };
  const cases: [string, { at: 'name' | 'parent' | 'none'; records: Caa[]; want: boolean }][] = [
    ['no CAA anywhere allows any CA', { at: 'none', records: [], want: true }],
    ['the name names our CA', { at: 'name', records: [{ tag: 'issue', value: 'ca.test' }], want: true }],
    [
      'parameters after the domain are ignored',
      { at: 'name', records: [{ tag: 'issue', value: 'ca.test; account=1' }], want: true },
    ],
    [
      'the parent names another CA',
      { at: 'parent', records: [{ tag: 'issue', value: 'other.test' }], want: false },
    ],
    [
      'an empty issue forbids every CA',
      { at: 'parent', records: [{ tag: 'issue', value: ';' }], want: false },
    ],
    ['only iodef: any CA', { at: 'name', records: [{ tag: 'iodef', value: 'mailto:a@b.test' }], want: true }],
    [
      'issuewild does not bind a plain name',
      { at: 'name', records: [{ tag: 'issuewild', value: 'other.test' }], want: true },
    ],
    [
      'an unknown critical tag forbids',
      {
        at: 'name',
        records: [
          { flags: 128, tag: 'tbs', value: 'x' },
          { tag: 'issue', value: 'ca.test' },
        ],
        want: false,
      },
    ],
  ];
  it.each(cases)('%s', async (name, { at, records, want }) => {
    const zone = `${name.replace(/[^a-z]/g, '').slice(0, 30)}.example.net`;
    const host = `www.${zone}`;
    dns.setAddresses(host, '127.0.0.1');
    dns.setAddresses(zone, '127.0.0.1');
    if (at !== 'none') dns.setCaa(at === 'name' ? host : zone, ...records);
    const result = await checkCaa(config, host, ['ca.test']);
    expect(result.ok, JSON.stringify(result)).toBe(want);
  });

  it('the closest set wins: the name’s own records over its parent’s', async () => {
    dns.setAddresses('www.closest.example.org', '127.0.0.1');
    dns.setCaa('closest.example.org', { tag: 'issue', value: 'other.test' });
    dns.setCaa('www.closest.example.org', { tag: 'issue', value: 'ca.test' });
    expect(await checkCaa(config, 'www.closest.example.org', ['ca.test'])).toEqual({ ok: true });
  });
});
