// Any failure → what svcctl prints on stderr and the exit code (exit-codes.ts). API problems show
// everything a user needs to fix the call or to quote to support: title, detail, code, request id,
// and each validation error with its location and pointer (DECISIONS.md §2).
import { isSvcApiError, isSvcNetworkError, isSvcTimeoutError, type SvcApiError } from '@svcplatform/sdk';
import { CliError, UsageError } from './errors.js';
import { ExitCode, exitCodeForStatus } from './exit-codes.js';

export interface FailureReport {
  text: string;
  exitCode: number;
}

export function describeFailure(
  err: unknown,
  env: Readonly<Record<string, string | undefined>> = process.env,
): FailureReport {
  if (err instanceof UsageError) {
    return { text: `error: ${err.message}\n(add --help for usage)\n`, exitCode: ExitCode.usage };
  }
  if (err instanceof CliError) return { text: `error: ${err.message}\n`, exitCode: err.exitCode };
  if (isSvcApiError(err)) return { text: describeProblem(err), exitCode: exitCodeForStatus(err.status) };
  if (isSvcTimeoutError(err)) {
    return { text: `error: no answer: ${err.message}\n`, exitCode: ExitCode.network };
  }
  if (isSvcNetworkError(err)) {
    return {
      text: `error: cannot reach the API: ${err.message}\n  (check --base-url, SVCCTL_BASE_URL or the profile's base_url)\n`,
      exitCode: ExitCode.network,
    };
  }
  const detail =
    err instanceof Error ? (env.SVCCTL_DEBUG ? (err.stack ?? err.message) : err.message) : String(err);
  return { text: `error: ${detail}\n`, exitCode: ExitCode.failure };
}

function describeProblem(err: SvcApiError): string {
  const lines = [`error: ${err.title || 'Request failed'} (HTTP ${err.status})`];
  if (err.detail) lines.push(`  ${err.detail}`);
  const fields: [string, string][] = [['code', err.code]];
  if (err.details !== null && err.details !== undefined) {
    fields.push(['details', typeof err.details === 'string' ? err.details : JSON.stringify(err.details)]);
  }
  if (err.retryAfter !== null) fields.push(['retry after', `${err.retryAfter}s`]);
  fields.push(['request id', err.requestId ?? '(none)']);
  const width = Math.max(...fields.map(([k]) => k.length)) + 1;
  for (const [k, v] of fields) lines.push(`  ${`${k}:`.padEnd(width)} ${v}`);
  if (err.errors.length > 0) {
    lines.push('  validation errors:');
    for (const e of err.errors) lines.push(`    - ${e.location} ${e.pointer || '/'}: ${e.message}`);
  }
  if (err.code === 'elevation-required') {
    lines.push(
      '  (elevate first: svcctl sudo elevate, or svcctl sudo totp verify; svcctl sudo status shows what is set up)',
    );
  }
  return `${lines.join('\n')}\n`;
}
