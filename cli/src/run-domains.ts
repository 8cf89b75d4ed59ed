// `svcctl domains add` and `svcctl domains check` in table mode: the claim, and while it is not
// verified, the DNS record to publish set apart under it, ready to copy; `domains connect verify`'s
// exit code. Imported when one runs.
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { formatValue } from './output/format.js';
import { isRecord } from './output/table.js';
import { resolveSettings } from './settings.js';

/** Whether the answer will be printed as a table (json and yaml print the claim alone). */
export async function printsTable(input: ParsedInput): Promise<boolean> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  return settings.outputFormat === 'table' && !settings.quiet;
}

/** The claim as key/value lines, then the record to publish unless it is verified. */
export async function claimWithRecord(claim: unknown, organizationId: string): Promise<unknown> {
  if (!isRecord(claim) || typeof claim.record_name !== 'string') return claim;
  const lines = await formatValue(claim, 'table');
  if (claim.status === 'verified') return lines;
  return [
    lines,
    `To prove it, publish this DNS record, then run: svcctl domains check ${organizationId} ${String(claim.domain)}`,
    `  NAME   ${claim.record_name}`,
    `  TYPE   ${String(claim.record_type)}`,
    `  VALUE  ${String(claim.record_value)}`,
    '',
  ].join('\n');
}

/**
 * After `domains check`: a claim the check left unverified (failed, lost, or still pending) is a failed
 * check, so `svcctl domains check ... && deploy` stops there. The claim was printed already.
 */
export function requireVerified(claim: unknown): void {
  if (!isRecord(claim) || claim.status === 'verified') return;
  const why = typeof claim.last_error === 'string' ? `: ${claim.last_error}` : '';
  throw new CliError(
    `${String(claim.domain)} is not verified (status ${String(claim.status)})${why}`,
    ExitCode.checkFailed,
  );
}

/**
 * After `domains connect verify`: a link whose SRV record was not found pointing at the service (pending,
 * failed) is a failed check, so a script can wait for propagation. The link was printed already.
 */
export function requireActiveLink(link: unknown): void {
  if (!isRecord(link) || link.status === 'active') return;
  const why = typeof link.last_error === 'string' ? `: ${link.last_error}` : '';
  throw new CliError(
    `${String(link.hostname)} is not active (status ${String(link.status)})${why}`,
    ExitCode.checkFailed,
  );
}
