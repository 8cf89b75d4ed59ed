// svcctl's exit codes. Scripts branch on them, so they are part of the interface: documented in
// cli/README.md and the `svcctl --help` epilog (both rendered from EXIT_CODES), pinned by tests.

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  invalid: 5,
  conflict: 6,
  server: 7,
  network: 8,
  rateLimited: 9,
  checkFailed: 10,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES: readonly { code: ExitCode; meaning: string }[] = [
  { code: ExitCode.ok, meaning: 'success' },
  { code: ExitCode.failure, meaning: 'unexpected failure (a bug, an unreadable file, an unexpected answer)' },
  {
    code: ExitCode.usage,
    meaning: 'usage error: unknown command or flag, bad or missing argument, bad --data',
  },
  { code: ExitCode.notFound, meaning: 'not found (HTTP 404, 410)' },
  { code: ExitCode.auth, meaning: 'not signed in or not allowed (HTTP 401, 403)' },
  { code: ExitCode.invalid, meaning: 'request refused as invalid (HTTP 400 and any other 4xx)' },
  { code: ExitCode.conflict, meaning: 'conflict or business rule (HTTP 409, 422)' },
  { code: ExitCode.server, meaning: 'server error or capability unavailable (HTTP 5xx)' },
  { code: ExitCode.network, meaning: 'network failure or timeout: no answer from the server' },
  { code: ExitCode.rateLimited, meaning: 'rate limited (HTTP 429); retry after the time shown' },
  {
    code: ExitCode.checkFailed,
    meaning:
      'a check found no proof or an action was not done: `domains check` left the claim unverified, `domains connect verify` left the link not active, a `game` action answered a status other than ok (printed, with why on stderr)',
  },
];

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 404 || status === 410) return ExitCode.notFound;
  if (status === 401 || status === 403) return ExitCode.auth;
  if (status === 409 || status === 422) return ExitCode.conflict;
  if (status === 429) return ExitCode.rateLimited;
  if (status >= 400 && status < 500) return ExitCode.invalid;
  if (status >= 500) return ExitCode.server;
  return ExitCode.failure;
}

export function exitCodeHelp(): string {
  return ['Exit codes:', ...EXIT_CODES.map((e) => `  ${String(e.code).padEnd(3)}${e.meaning}`)].join('\n');
}
