// The preflight before a certificate is asked for (server/src/certificates/preflight.ts) against a real
// DNS server: the name must resolve to the ingress only, and CAA (RFC 8659) must allow our CA. A name
// in the platform's own zones is asked of the platform's DNS whatever DNS_SERVERS names, and a refusal
// above such a zone's apex is no CAA (DECISIONS.md §8 "Custom domains on the embedded default").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCaa, checkResolvesToIngress } from '../../server/src/certificates/preflight.js';
import type { ZoneRouting } from '../../server/src/dns/platform-zones.js';
import { startTestDns, type TestDns } from '../support/dns.js';

let dns: TestDns;
/** Stands for the platform's DNS (authoritative for play.test) in the platform-zone cases. */
let own: TestDns;
const config = { dnsTimeoutMs: 600 };
let routing: ZoneRouting;

beforeAll(async () => {
  [dns, own] = await Promise.all([startTestDns(), startTestDns()]);
  routing = { zones: ['play.test'], platform: own.server, configured: [dns.server] };
});
afterAll(async () => {
  await dns?.close();
  await own?.close();
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
    const result = await checkResolvesToIngress(config, routing, name, ['127.0.0.1']);
    if (want === null) expect(result).toEqual({ ok: true });
    else expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(want) });
  });

  it('says the servers did not answer when they fail', async () => {
    dns.mode = 'servfail';
    try {
      const result = await checkResolvesToIngress(config, routing, 'broken.example.com', ['127.0.0.1']);
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
    const result = await checkCaa(config, routing, host, ['ca.test']);
    expect(result.ok, JSON.stringify(result)).toBe(want);
  });

  it('the closest set wins: the name’s own records over its parent’s', async () => {
    dns.setAddresses('www.closest.example.org', '127.0.0.1');
    dns.setCaa('closest.example.org', { tag: 'issue', value: 'other.test' });
    dns.setCaa('www.closest.example.org', { tag: 'issue', value: 'ca.test' });
    expect(await checkCaa(config, routing, 'www.closest.example.org', ['ca.test'])).toEqual({ ok: true });
  });
});

describe('names in the platform’s zones', () => {
  it('are asked of the platform’s DNS, not of DNS_SERVERS', async () => {
    own.setAddresses('shop.play.test', '127.0.0.1');
    dns.setAddresses('shop.play.test', '192.0.2.7');
    expect(await checkResolvesToIngress(config, routing, 'shop.play.test', ['127.0.0.1'])).toEqual({
      ok: true,
    });
  });

  it('read CAA up to the apex from the platform, and a refusal above it is no CAA', async () => {
    own.setAddresses('shop.play.test', '127.0.0.1');
    dns.mode = 'refused';
    try {
      expect(await checkCaa(config, routing, 'shop.play.test', ['ca.test'])).toEqual({ ok: true });
      // Not the platform's zone: a refusal is not a yes.
      const other = await checkCaa(config, routing, 'shop.example.com', ['ca.test']);
      expect(other).toMatchObject({ ok: false, reason: expect.stringContaining('EREFUSED') });
    } finally {
      dns.mode = 'answer';
    }
  });

  it('still honour CAA the platform’s zone or a resolver above it holds', async () => {
    own.setAddresses('caa.play.test', '127.0.0.1');
    own.setCaa('caa.play.test', { tag: 'issue', value: 'other.test' });
    expect(await checkCaa(config, routing, 'caa.play.test', ['ca.test'])).toMatchObject({ ok: false });
    own.setAddresses('up.play.test', '127.0.0.1');
    dns.setCaa('test', { tag: 'issue', value: 'other.test' });
    expect(await checkCaa(config, routing, 'up.play.test', ['ca.test'])).toMatchObject({ ok: false });
  });
});
