// `svcctl orgs icon set ID FILE`, `svcctl projects list [--org ID]` and `svcctl projects stats [ID]`.
// Imported when one runs.
import { basename } from 'node:path';
import { operations } from '@svcplatform/sdk/operations';
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { idAndImageArgs, readImage } from './image-file.js';
import type { CliOperation } from './operation.js';
import { writeResult } from './output/write-result.js';
import { runOperation } from './run-operation.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

export async function runIconSet(input: ParsedInput): Promise<void> {
  const [id, file] = idAndImageArgs(input.args, 'ORG_ID');
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const bytes = await readImage(file);
  const client = await openClient(settings);
  const organization = await client.uploadOrganizationIcon(id, bytes, {
    filename: file === '-' ? 'icon' : basename(file),
  });
  await writeResult(organization, settings);
}

const operation = (id: string): CliOperation => (operations as Record<string, CliOperation>)[id]!;

/** `projects list`: every project of the caller, or with `--org` one organization's. */
export function runProjectList(input: ParsedInput): Promise<void> {
  const org = input.options.org as string | undefined;
  if (org === undefined) return runOperation(operation('projectList'), { ...input, args: [] }, []);
  return runOperation(operation('organizationProjectList'), { ...input, args: [org] }, []);
}

/** `projects stats [id]`: one project's stats, or without an id those of every project. */
export function runProjectStats(input: ParsedInput): Promise<void> {
  const [id] = input.args;
  if (id === undefined) return runOperation(operation('projectStatsList'), input, []);
  return runOperation(operation('projectStatsGet'), input, []);
}

/** `members add`: the membership answered, unless it holds another role than the one asked for. */
export function requireRole(membership: unknown, asked: string, organizationId: string): unknown {
  const m = membership as { role?: unknown; user_id?: unknown; name?: unknown };
  if (typeof m?.role !== 'string' || m.role === asked) return membership;
  const who = typeof m.name === 'string' && m.name ? `${m.name} (${String(m.user_id)})` : String(m.user_id);
  throw new CliError(
    `${who} is already a member of this organization, as ${m.role}; nothing was changed. To make them ${asked}: svcctl members update ${organizationId} ${String(m.user_id)} --role ${asked}`,
    ExitCode.conflict,
  );
}
