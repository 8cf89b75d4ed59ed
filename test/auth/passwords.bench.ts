// Timing of the sign-in password check: a known account with a wrong password and an unknown
// account (null hash → dummy hash) must cost the same (DECISIONS.md §4). Measured here, never
// asserted in tests: timing on shared CI machines is too noisy to gate on.
// Run: npx vitest bench --run test/auth/passwords.bench.ts
import { bench, describe } from 'vitest';
import { hashPassword, verifyPassword } from '../../server/src/auth/crypto/passwords.js';

const stored = await hashPassword('vq7-lake-ferns');

describe('verifyPassword', () => {
  bench('known account, wrong password', async () => {
    await verifyPassword(stored, 'not-the-password');
  });
  bench('unknown account (dummy hash)', async () => {
    await verifyPassword(null, 'not-the-password');
  });
  bench('corrupt stored hash', async () => {
    await verifyPassword('not-a-hash', 'not-the-password');
  });
  bench('known account, right password', async () => {
    await verifyPassword(stored, 'vq7-lake-ferns');
  });
});
