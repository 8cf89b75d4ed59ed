import { describe, expect, it } from 'vitest';
import { effectiveStatus, expiresAt, mailTime, reinviteBlockedUntil, type StoredStatus } from './rules.js';

const made = new Date('2026-11-21T12:00:00.000Z');
const at = (iso: string) => new Date(iso);

describe('effectiveStatus', () => {
  const cases: [string, { given: { status: StoredStatus; now: string }; want: string }][] = [
    [
      'pending, just made',
      { given: { status: 'pending', now: '2026-11-21T12:00:00.000Z' }, want: 'pending' },
    ],
    [
      'pending, a millisecond before expiry',
      { given: { status: 'pending', now: '2026-11-28T11:59:59.999Z' }, want: 'pending' },
    ],
    [
      'pending, at expiry',
      { given: { status: 'pending', now: '2026-11-28T12:00:00.000Z' }, want: 'expired' },
    ],
    [
      'pending, long after',
      { given: { status: 'pending', now: '2027-01-01T00:00:00.000Z' }, want: 'expired' },
    ],
    [
      'accepted stays accepted past expiry',
      { given: { status: 'accepted', now: '2027-01-01T00:00:00.000Z' }, want: 'accepted' },
    ],
    [
      'declined stays declined',
      { given: { status: 'declined', now: '2027-01-01T00:00:00.000Z' }, want: 'declined' },
    ],
    [
      'revoked stays revoked',
      { given: { status: 'revoked', now: '2027-01-01T00:00:00.000Z' }, want: 'revoked' },
    ],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(effectiveStatus({ status: given.status, expires_at: expiresAt(made) }, at(given.now))).toBe(want);
  });
});

describe('reinviteBlockedUntil', () => {
  const declinedAt = at('2026-11-22T08:00:00.000Z');
  const until = at('2026-12-22T08:00:00.000Z');
  const cases: [
    string,
    { given: { status: StoredStatus; allowed?: Date; now: string }; want: Date | null },
  ][] = [
    [
      'declined, the next day',
      { given: { status: 'declined', now: '2026-11-23T08:00:00.000Z' }, want: until },
    ],
    [
      'declined, a millisecond before 30 days',
      { given: { status: 'declined', now: '2026-12-22T07:59:59.999Z' }, want: until },
    ],
    ['declined, 30 days on', { given: { status: 'declined', now: '2026-12-22T08:00:00.000Z' }, want: null }],
    [
      'declined, cool-down lifted',
      {
        given: {
          status: 'declined',
          allowed: at('2026-11-23T00:00:00.000Z'),
          now: '2026-11-23T08:00:00.000Z',
        },
        want: null,
      },
    ],
    [
      'pending holds nothing back here',
      { given: { status: 'pending', now: '2026-11-23T08:00:00.000Z' }, want: null },
    ],
    [
      'revoked holds nothing back',
      { given: { status: 'revoked', now: '2026-11-23T08:00:00.000Z' }, want: null },
    ],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    const inv = {
      status: given.status,
      declined_at: given.status === 'declined' ? declinedAt : null,
      reinvite_allowed_at: given.allowed ?? null,
    };
    expect(reinviteBlockedUntil(inv, at(given.now))).toEqual(want);
  });
});

it('mailTime states the minute in UTC', () => {
  expect(mailTime(at('2026-11-28T12:00:59.999Z'))).toBe('2026-11-28 12:00 UTC');
});
