import { describe, expect, it } from 'vitest';
import { classifyFailure, MAX_ATTEMPTS, retryDelayMs, shortError } from './retry.js';

describe('retryDelayMs', () => {
  const cases: [string, { given: number; want: number }][] = [
    ['after the first attempt', { given: 1, want: 30_000 }],
    ['doubles', { given: 2, want: 60_000 }],
    ['keeps doubling', { given: 5, want: 480_000 }],
    ['capped at 30 minutes', { given: 7, want: 1_800_000 }],
    ['stays capped', { given: 20, want: 1_800_000 }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(retryDelayMs(given)).toBe(want);
  });
});

const smtpError = (fields: Record<string, unknown>) =>
  Object.assign(new Error(String(fields.message ?? 'failed')), fields);

describe('classifyFailure', () => {
  const cases: [string, { err: unknown; attempt: number; want: { giveUp: boolean; error: RegExp } }][] = [
    [
      'a 4xx to RCPT is retried',
      {
        err: smtpError({
          code: 'EENVELOPE',
          command: 'RCPT TO',
          responseCode: 451,
          permanent: false,
          message: "Can't send mail - all recipients were rejected: 451 try later",
        }),
        attempt: 1,
        want: { giveUp: false, error: /^EENVELOPE: Can't send mail .*451 try later$/ },
      },
    ],
    [
      'a 5xx to RCPT is given up at once',
      {
        err: smtpError({
          code: 'EENVELOPE',
          command: 'RCPT TO',
          responseCode: 550,
          permanent: true,
          message: '550 no such user',
        }),
        attempt: 1,
        want: { giveUp: true, error: /550 no such user/ },
      },
    ],
    [
      'a permanent authentication refusal is retried: the operator may fix the configuration',
      {
        err: smtpError({
          code: 'EAUTH',
          command: 'AUTH PLAIN',
          responseCode: 535,
          permanent: true,
          message: 'Invalid login: 535 nope',
        }),
        attempt: 3,
        want: { giveUp: false, error: /^EAUTH: Invalid login/ },
      },
    ],
    [
      'a connection failure is retried',
      {
        err: smtpError({ code: 'ESOCKET', message: 'connect ECONNREFUSED 127.0.0.1:2525' }),
        attempt: 2,
        want: { giveUp: false, error: /ECONNREFUSED/ },
      },
    ],
    [
      'the last attempt gives up',
      {
        err: smtpError({ code: 'ESOCKET', message: 'connect ECONNREFUSED' }),
        attempt: MAX_ATTEMPTS,
        want: { giveUp: true, error: /ECONNREFUSED/ },
      },
    ],
    ['a thrown string', { err: 'boom', attempt: 1, want: { giveUp: false, error: /^boom$/ } }],
  ];
  it.each(cases)('%s', (_name, { err, attempt, want }) => {
    const outcome = classifyFailure(err, attempt, []);
    expect(outcome.giveUp).toBe(want.giveUp);
    expect(outcome.error).toMatch(want.error);
  });
});

describe('shortError', () => {
  it('masks the given secrets and URL credentials, folds lines and truncates', () => {
    const err = new Error(
      `Invalid login for smtps://mailer:hunter22@smtp.example.com\n  with hunter22 and more ${'x'.repeat(400)}`,
    );
    const text = shortError(err, ['hunter22']);
    expect(text).not.toContain('hunter22');
    expect(text).toContain('smtps://***@smtp.example.com');
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThanOrEqual(300);
  });
});
