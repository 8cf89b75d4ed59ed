// The pure rules of claimed domains, table-driven: which names may be claimed and how they are
// normalised (names.ts), what a check does to a claim (transitions.ts), and which organization holds a
// domain (holder.ts).
import { describe, expect, it } from 'vitest';
import { GRACE_MS, holderOf, type HoldingClaim } from '../../server/src/features/domains/holder.js';
import { claimableDomain, coveringNames, parseHostname } from '../../server/src/features/domains/names.js';
import type { ProofOutcome } from '../../server/src/features/domains/proof.js';
import { afterCheck, type CheckState } from '../../server/src/features/domains/transitions.js';

describe('claimableDomain', () => {
  const accepted: [string, string][] = [
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['XN--BCHER-KVA.DE', 'xn--bcher-kva.de'],
    ['example.co.uk', 'example.co.uk'],
    ['alice.github.io', 'alice.github.io'],
    ['EXAMPLE。COM', 'example.com'],
    // DECISIONS §7: a team that controls only a subdomain claims that.
    ['www.example.com', 'www.example.com'],
    ['Shop.BigCorp.co.uk.', 'shop.bigcorp.co.uk'],
    ['deep.shop.alice.github.io', 'deep.shop.alice.github.io'],
  ];
  it.each(accepted)('%s → %s', (input, domain) => {
    expect(claimableDomain(input)).toEqual({ ok: true, domain });
  });

  const refused: [string, string, RegExp][] = [
    ['an IPv4 address', '192.0.2.1', /IP address/],
    ['a public suffix alone', 'co.uk', /co\.uk is a public suffix/],
    ['a top-level domain alone', 'com', /public suffix/],
    ['a private public suffix alone', 'github.io', /public suffix/],
    ['an unknown suffix', 'printer.local', /not under a known public suffix/],
    ['an underscore', 'foo_bar.com', /Only letters, digits/],
    ['a URL', 'https://example.com/', /Only letters, digits/],
    ['a path', 'example.com/path', /Only letters, digits/],
    ['a port', 'example.com:443', /Only letters, digits/],
    ['a percent escape', 'ex%41mple.com', /Only letters, digits/],
    ['a wildcard', '*.example.com', /Only letters, digits/],
    ['a space', 'exa mple.com', /Only letters, digits/],
    ['a leading hyphen', '-example.com', /neither starts nor ends with a hyphen|not a valid domain name/],
    ['an empty label', 'example..com', /1 to 63 characters|not a valid/],
    ['a label over 63 characters', `${'a'.repeat(64)}.com`, /1 to 63 characters/],
    ['a name over 253 characters', `${'abcdefghi.'.repeat(25)}example.com`, /at most 253 characters/],
    ['bad punycode', 'xn--zz.com', /not a valid domain name/],
    ['only a root dot', '.', /not a valid domain name/],
  ];
  it.each(refused)('refuses %s (%s)', (_what, input, reason) => {
    const parsed = claimableDomain(input);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });

  it('refuses the platform\'s zones and every name in them, and nothing else', () => {
    const zones = ['apps.hosting.com'];
    for (const name of ['apps.hosting.com', 'x.apps.hosting.com', 'A.B.Apps.Hosting.Com.']) {
      const parsed = claimableDomain(name, zones);
      expect(parsed.ok ? '' : parsed.reason).toMatch(/a zone the platform serves/);
    }
    expect(claimableDomain('hosting.com', zones)).toEqual({ ok: true, domain: 'hosting.com' });
    expect(claimableDomain('xapps.hosting.com', zones)).toEqual({ ok: true, domain: 'xapps.hosting.com' });
  });

  it('coveringNames walks from the name to its registrable domain', () => {
    expect(coveringNames('a.b.example.co.uk', 'example.co.uk')).toEqual([
      'a.b.example.co.uk',
      'b.example.co.uk',
      'example.co.uk',
    ]);
    expect(coveringNames('example.com', 'example.com')).toEqual(['example.com']);
  });

  it('parseHostname accepts names under a registrable domain, with that domain', () => {
    expect(parseHostname('Shop.Bücher.de.')).toEqual({
      ok: true,
      hostname: 'shop.xn--bcher-kva.de',
      registrable: 'xn--bcher-kva.de',
    });
  });
});

describe('afterCheck', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const now = new Date('2026-02-01T00:00:00Z');
  const found: ProofOutcome = { kind: 'found' };
  const absent: ProofOutcome = { kind: 'absent', error: 'No TXT record.' };
  const unanswered: ProofOutcome = { kind: 'unanswered', error: 'The DNS servers did not answer in time.' };
  const base: CheckState = {
    status: 'pending',
    first_verified_at: null,
    verified_at: null,
    last_checked_at: null,
    last_error: null,
    lost_since: null,
  };
  const verified: CheckState = {
    ...base,
    status: 'verified',
    first_verified_at: t0,
    verified_at: t0,
    last_checked_at: t0,
  };
  const lost: CheckState = { ...verified, status: 'lost', lost_since: t0, last_error: 'gone' };
  const failed: CheckState = { ...base, status: 'failed', last_checked_at: t0, last_error: 'earlier' };

  const cases: [
    string,
    { given: CheckState; outcome: ProofOutcome; want: Partial<CheckState>; event: string | null },
  ][] = [
    [
      'pending, found: verified, first_verified_at set',
      {
        given: base,
        outcome: found,
        want: { status: 'verified', first_verified_at: now, verified_at: now, last_error: null },
        event: 'domain.verified',
      },
    ],
    [
      'pending, absent: failed',
      {
        given: base,
        outcome: absent,
        want: { status: 'failed', last_error: 'No TXT record.' },
        event: 'domain.failed',
      },
    ],
    [
      'pending, no answer: failed',
      {
        given: base,
        outcome: unanswered,
        want: { status: 'failed', last_error: unanswered.error },
        event: 'domain.failed',
      },
    ],
    [
      'failed, absent: failed, no event',
      { given: failed, outcome: absent, want: { status: 'failed' }, event: null },
    ],
    [
      'failed, found: verified',
      {
        given: failed,
        outcome: found,
        want: { status: 'verified', first_verified_at: now },
        event: 'domain.verified',
      },
    ],
    [
      'verified, found: verified_at advances, first_verified_at stays',
      { given: verified, outcome: found, want: { verified_at: now, first_verified_at: t0 }, event: null },
    ],
    [
      'verified, absent: lost since now',
      {
        given: verified,
        outcome: absent,
        want: { status: 'lost', lost_since: now, verified_at: t0 },
        event: 'domain.lost',
      },
    ],
    [
      'verified, no answer: still verified, the reason kept',
      {
        given: verified,
        outcome: unanswered,
        want: { status: 'verified', verified_at: t0, lost_since: null, last_error: unanswered.error },
        event: null,
      },
    ],
    [
      'lost, absent: lost_since unchanged',
      { given: lost, outcome: absent, want: { status: 'lost', lost_since: t0 }, event: null },
    ],
    [
      'lost, no answer: still lost',
      { given: lost, outcome: unanswered, want: { status: 'lost', lost_since: t0 }, event: null },
    ],
    [
      'lost, found: verified again, first_verified_at unchanged',
      {
        given: lost,
        outcome: found,
        want: {
          status: 'verified',
          lost_since: null,
          first_verified_at: t0,
          verified_at: now,
          last_error: null,
        },
        event: 'domain.verified',
      },
    ],
  ];
  it.each(cases)('%s', (_name, { given, outcome, want, event }) => {
    const result = afterCheck(given, outcome, now);
    expect(result.next).toMatchObject({ ...want, last_checked_at: now });
    expect(result.event).toBe(event);
  });
});

describe('holderOf', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const DAY = 86_400_000;
  const claim = (organization_id: string, over: Partial<HoldingClaim>): HoldingClaim => ({
    organization_id,
    status: 'pending',
    first_verified_at: null,
    lost_since: null,
    grandfathered_until: null,
    created_at: ago(100 * DAY),
    ...over,
  });
  const cases: [string, { claims: HoldingClaim[]; want: string | null }][] = [
    ['no claims', { claims: [], want: null }],
    ['a pending claim serves nothing', { claims: [claim('a', {})], want: null }],
    ['a failed claim serves nothing', { claims: [claim('a', { status: 'failed' })], want: null }],
    [
      'a verified claim',
      { claims: [claim('a', { status: 'verified', first_verified_at: ago(DAY) })], want: 'a' },
    ],
    [
      'lost within the grace',
      {
        claims: [
          claim('a', { status: 'lost', first_verified_at: ago(30 * DAY), lost_since: ago(GRACE_MS - 1) }),
        ],
        want: 'a',
      },
    ],
    [
      'lost for fourteen days: no longer',
      {
        claims: [claim('a', { status: 'lost', first_verified_at: ago(30 * DAY), lost_since: ago(GRACE_MS) })],
        want: null,
      },
    ],
    [
      'grandfathered until later',
      { claims: [claim('a', { grandfathered_until: new Date(now.getTime() + 1) })], want: 'a' },
    ],
    [
      'grandfathered until now: no longer',
      { claims: [claim('a', { grandfathered_until: now })], want: null },
    ],
    [
      'a verified claim stands before another organization’s lost one in its grace',
      {
        claims: [
          claim('a', { status: 'lost', first_verified_at: ago(90 * DAY), lost_since: ago(DAY) }),
          claim('b', { status: 'verified', first_verified_at: ago(DAY) }),
        ],
        want: 'b',
      },
    ],
    [
      'a lost claim in its grace stands before a grandfathered one',
      {
        claims: [
          claim('a', { grandfathered_until: new Date(now.getTime() + DAY) }),
          claim('b', { status: 'lost', first_verified_at: ago(9 * DAY), lost_since: ago(DAY) }),
        ],
        want: 'b',
      },
    ],
    [
      'two verified claims: the first verified keeps it',
      {
        claims: [
          claim('b', { status: 'verified', first_verified_at: ago(DAY) }),
          claim('a', { status: 'verified', first_verified_at: ago(2 * DAY) }),
        ],
        want: 'a',
      },
    ],
    [
      'two grandfathered claims: the first made',
      {
        claims: [
          claim('b', { grandfathered_until: new Date(now.getTime() + DAY), created_at: ago(DAY) }),
          claim('a', { grandfathered_until: new Date(now.getTime() + DAY), created_at: ago(2 * DAY) }),
        ],
        want: 'a',
      },
    ],
  ];
  it.each(cases)('%s', (_name, { claims, want }) => {
    expect(holderOf(claims, now)).toBe(want);
  });
});
