// What one elevation attempt costs the server in CPU, by method: a PIN is one argon2id verification
// at the password parameters (the same work as the password check of a sign-in, the baseline), a TOTP
// code three HMAC-SHA-1s through otplib (against one HMAC-SHA-1 by hand, the baseline). Median of
// interleaved samples in one run. Run alone with `npx tsx scripts/bench/elevation-cost.ts`.
import { createHmac } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../server/src/auth/crypto/passwords.js';
import { matchTotp, newTotpSecret } from '../../server/src/features/sudo/totp.js';
import { base32Decode, totpAt } from '../../test/support/totp.js';

export interface ElevationCost {
  pinMs: number;
  passwordMs: number;
  totpUs: number;
  hmacUs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function measureElevationCost(samples = 15): Promise<ElevationCost> {
  const pinHash = await hashPassword('482913');
  const passwordHash = await hashPassword('correct horse battery staple');
  const secret = newTotpSecret();
  const key = base32Decode(secret);
  const now = new Date();
  const code = totpAt(secret, now);
  const pin: number[] = [];
  const password: number[] = [];
  const totp: number[] = [];
  const hmac: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    pin.push(await time(() => verifyPassword(pinHash, '000000')));
    password.push(await time(() => verifyPassword(passwordHash, 'wrong password!')));
    // Sub-millisecond work: time batches of 200.
    totp.push((await time(async () => { for (let j = 0; j < 200; j += 1) await matchTotp(secret, code, now); })) / 200);
    hmac.push((await time(() => { for (let j = 0; j < 200; j += 1) createHmac('sha1', key).update(Buffer.alloc(8)).digest(); })) / 200);
  }
  return { pinMs: median(pin), passwordMs: median(password), totpUs: median(totp) * 1000, hmacUs: median(hmac) * 1000 };
}

export function describeElevationCost(c: ElevationCost): string[] {
  return [
    `  PIN verify      ${c.pinMs.toFixed(1)} ms   vs password verify ${c.passwordMs.toFixed(1)} ms: ${(c.pinMs / c.passwordMs).toFixed(2)}x`,
    `  TOTP verify     ${c.totpUs.toFixed(1)} µs   vs one HMAC-SHA-1 ${c.hmacUs.toFixed(1)} µs: ${(c.totpUs / c.hmacUs).toFixed(1)}x`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(describeElevationCost(await measureElevationCost()).join('\n'));
}
