// The organization standing (document 1, "Organization standing"): whether new paid work may start,
// decided in exact cents (PostgreSQL numeric → string → bigint), never through JS floats.
import type { components } from '../../../../generated/api.js';
import type { WalletRow } from './store.js';

type Standing = components['schemas']['Standing'];

/** What every member who is not an owner reads when restricted, whatever the reason (seed). */
export const MEMBER_MESSAGE =
  'This organization cannot start new paid work at the moment. An owner of the organization can resolve this.';

const MONEY = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;

/** "12.5" → 1250n; the wallet's numeric(14, 2) columns print with at most two places. */
export function toCents(amount: string): bigint {
  const m = MONEY.exec(amount.trim());
  if (!m) throw new Error(`not a money amount: ${JSON.stringify(amount)}`);
  const cents = BigInt(m[2]!) * 100n + BigInt((m[3] ?? '').padEnd(2, '0'));
  return m[1] === '-' ? -cents : cents;
}

/** 1250n → "12.50", -5n → "-0.05". */
export function formatCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Restricted when balance − reservations − open receivables + credit limit falls below the floor. */
export function standingOf(wallet: WalletRow, forOwner: boolean): Standing {
  const c = {
    balance: toCents(wallet.balance),
    reservations: toCents(wallet.reservations),
    floor: toCents(wallet.floor),
    credit_limit: toCents(wallet.credit_limit),
    open_receivables: toCents(wallet.open_receivables),
  };
  const available = c.balance - c.reservations - c.open_receivables + c.credit_limit;
  const restricted = available < c.floor;
  let message: string | null = null;
  if (restricted) {
    message = forOwner
      ? `New paid work cannot start: the available funds are ${formatCents(c.floor - available)} EUR short of the ` +
        `floor of ${formatCents(c.floor)} EUR. Top up the wallet or settle open receivables to lift the restriction.`
      : MEMBER_MESSAGE;
  }
  return {
    restricted,
    message,
    detail: forOwner
      ? {
          currency: 'EUR',
          balance: formatCents(c.balance),
          reservations: formatCents(c.reservations),
          floor: formatCents(c.floor),
          credit_limit: formatCents(c.credit_limit),
          open_receivables: formatCents(c.open_receivables),
        }
      : null,
  };
}
