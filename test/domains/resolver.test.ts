// TXT lookups for domain proofs against a real DNS server on loopback (server/src/dns/resolver.ts):
// records joined from their character-strings, CNAMEs followed whether or not the server chases them,
// loops bounded, and servers that fail or never answer reported as failures within the deadline.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lookupTxt, MAX_CNAME_HOPS, type DnsOptions } from '../../server/src/dns/resolver.js';
import { startTestDns, type TestDns } from '../support/dns.js';

let dns: TestDns;
let options: DnsOptions;

beforeAll(async () => {
  dns = await startTestDns();
  options = { servers: [dns.server], timeoutMs: 2000 };
});
afterAll(async () => {
  await dns.close();
});
afterEach(() => {
  dns.mode = 'answer';
  dns.chase = false;
});

describe('lookupTxt', () => {
  it('answers every TXT record at the name, each joined from its character-strings', async () => {
    dns.setTxt('_svc-challenge.joined.example', 'v=spf1 -all', ['svc-domain-', 'verification=abc'], 'other');
    expect(await lookupTxt('_svc-challenge.joined.example', options)).toEqual({
      ok: true,
      records: ['v=spf1 -all', 'svc-domain-verification=abc', 'other'],
      chain: ['_svc-challenge.joined.example'],
    });
  });

  it('reads an answer too large for UDP (the server truncates, the resolver retries over TCP)', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `record-${i}-${'x'.repeat(40)}`);
    dns.setTxt('_svc-challenge.many.example', ...many);
    const answer = await lookupTxt('_svc-challenge.many.example', options);
    expect(answer).toMatchObject({ ok: true, records: many });
  });

  it('answers no records for a name that does not exist (NXDOMAIN) or holds no TXT (NODATA)', async () => {
    expect(await lookupTxt('missing.nothing.example', options)).toEqual({
      ok: true,
      records: [],
      chain: ['missing.nothing.example'],
    });
    dns.setTxt('empty.example');
    expect(await lookupTxt('empty.example', options)).toMatchObject({ ok: true, records: [] });
  });

  it('follows CNAMEs itself when the server answers the alias alone', async () => {
    dns.setCname('_svc-challenge.alias.example', 'proofs.provider.example');
    dns.setCname('proofs.provider.example', 'final.provider.example');
    dns.setTxt('final.provider.example', 'the-value');
    const before = dns.queries.length;
    expect(await lookupTxt('_svc-challenge.alias.example', options)).toEqual({
      ok: true,
      records: ['the-value'],
      chain: ['_svc-challenge.alias.example', 'proofs.provider.example', 'final.provider.example'],
    });
    expect(dns.queries.slice(before)).toEqual([
      'TXT _svc-challenge.alias.example',
      'CNAME _svc-challenge.alias.example',
      'TXT proofs.provider.example',
      'CNAME proofs.provider.example',
      'TXT final.provider.example',
    ]);
  });

  it('takes the records a recursive server returns through the CNAME in one answer', async () => {
    dns.chase = true;
    dns.setCname('_svc-challenge.chased.example', 'target.chased.example');
    dns.setTxt('target.chased.example', 'chased-value');
    const answer = await lookupTxt('_svc-challenge.chased.example', options);
    expect(answer).toMatchObject({ ok: true, records: ['chased-value'] });
  });

  it('refuses a CNAME loop and a chain longer than the bound', async () => {
    dns.setCname('a.loop.example', 'b.loop.example');
    dns.setCname('b.loop.example', 'a.loop.example');
    expect(await lookupTxt('a.loop.example', options)).toEqual({ ok: false, failure: 'cname-chain' });
    for (let i = 0; i <= MAX_CNAME_HOPS + 1; i += 1)
      dns.setCname(`h${i}.long.example`, `h${i + 1}.long.example`);
    dns.setTxt(`h${MAX_CNAME_HOPS + 2}.long.example`, 'too far');
    expect(await lookupTxt('h0.long.example', options)).toEqual({ ok: false, failure: 'cname-chain' });
  });

  it('reports server failure and refusal', async () => {
    dns.mode = 'servfail';
    expect(await lookupTxt('x.example', options)).toEqual({ ok: false, failure: 'server-failure' });
    dns.mode = 'refused';
    expect(await lookupTxt('x.example', options)).toEqual({ ok: false, failure: 'refused' });
  });

  it('gives up at the deadline when the server never answers', async () => {
    dns.mode = 'silent';
    const started = Date.now();
    expect(await lookupTxt('x.example', { servers: [dns.server], timeoutMs: 300 })).toEqual({
      ok: false,
      failure: 'timeout',
    });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1500);
  });
});
