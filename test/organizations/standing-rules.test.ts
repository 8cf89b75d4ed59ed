// The standing rule and its money arithmetic (server/src/features/organizations/standing.ts): exact
// cents, never floats. Table-driven: [name, { given, want }].
import { describe, expect, it } from 'vitest';
import { formatCents, MEMBER_MESSAGE, standingOf, toCents } from '../../server/src/features/organizations/standing.js';
import type { WalletRow } from '../../server/src/features/organizations/store.js';

const wallet = (w: Partial<WalletRow>): WalletRow => ({
  balance: '0.00',
  reservations: '0.00',
  floor: '0.00',
  credit_limit: '0.00',
  open_receivables: '0.00',
  ...w,
});

describe('toCents and formatCents', () => {
  it.each<[string, { given: string; want: bigint; printed: string }]>([
    ['zero', { given: '0.00', want: 0n, printed: '0.00' }],
    ['cents', { given: '0.07', want: 7n, printed: '0.07' }],
    ['one place', { given: '12.5', want: 1250n, printed: '12.50' }],
    ['no places', { given: '3', want: 300n, printed: '3.00' }],
    ['negative', { given: '-0.05', want: -5n, printed: '-0.05' }],
    ['beyond a double', { given: '999999999999.99', want: 99999999999999n, printed: '999999999999.99' }],
    // 0.1 + 0.2 is not 0.3 in floats; in cents it is.
    ['float trap', { given: '0.30', want: 10n + 20n, printed: '0.30' }],
  ])('%s', (_name, { given, want, printed }) => {
    expect(toCents(given)).toBe(want);
    expect(formatCents(want)).toBe(printed);
  });

  it('refuses what is not an amount', () => {
    for (const bad of ['', 'abc', '1.234', '1e3', 'NaN']) expect(() => toCents(bad)).toThrow();
  });
});

describe('standingOf', () => {
  it.each<[string, { given: Partial<WalletRow>; restricted: boolean; shortfall?: string }]>([
    ['an empty wallet', { given: {}, restricted: false }],
    ['exactly at the floor', { given: { balance: '10.00', floor: '10.00' }, restricted: false }],
    ['one cent below the floor', { given: { balance: '9.99', floor: '10.00' }, restricted: true, shortfall: '0.01' }],
    ['held by reservations', { given: { balance: '50.00', reservations: '45.00', floor: '10.00' }, restricted: true, shortfall: '5.00' }],
    ['held by receivables', { given: { balance: '50.00', open_receivables: '60.00' }, restricted: true, shortfall: '10.00' }],
    ['carried by credit', { given: { balance: '-20.00', credit_limit: '25.00', floor: '5.00' }, restricted: false }],
    ['beyond the credit', { given: { balance: '-20.10', credit_limit: '20.00' }, restricted: true, shortfall: '0.10' }],
    ['a float trap', { given: { balance: '0.10', reservations: '0.00', credit_limit: '0.20', floor: '0.30' }, restricted: false }],
  ])('%s', (_name, { given, restricted, shortfall }) => {
    const owner = standingOf(wallet(given), true);
    const member = standingOf(wallet(given), false);
    expect(owner.restricted).toBe(restricted);
    expect(member.restricted).toBe(restricted);
    expect(member.detail).toBeNull();
    expect(owner.detail).toEqual({
      currency: 'EUR',
      balance: formatCents(toCents(wallet(given).balance)),
      reservations: formatCents(toCents(wallet(given).reservations)),
      floor: formatCents(toCents(wallet(given).floor)),
      credit_limit: formatCents(toCents(wallet(given).credit_limit)),
      open_receivables: formatCents(toCents(wallet(given).open_receivables)),
    });
    if (!restricted) {
      expect(owner.message).toBeNull();
      expect(member.message).toBeNull();
    } else {
      expect(member.message).toBe(MEMBER_MESSAGE);
      expect(owner.message).toContain(`${shortfall} EUR short`);
    }
  });
});
