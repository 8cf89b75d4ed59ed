// `svcctl vps reinstall`, `svcctl power start|stop|restart`, `svcctl operations wait`, the --wait of
// `svcctl admin subscriptions create`, and the tables of `svcctl resources list` and
// `svcctl subscriptions resources`. Imported when one runs.
//
// A long action answers 202 with an operation to poll (SUBSTRATE.md "Durable operations"). The answer
// is printed on stdout at once, so its ids are there even if the wait is cut short; --wait then follows
// the operation on stderr (output/operation-progress.ts) and the exit code says how it ended: 0 when it
// succeeded, OPERATION_FAILED when it failed or was cancelled, with its error on stderr. Ctrl-C stops
// the waiting, never the operation, and says how to resume it.
//
// Every start of a long action carries an Idempotency-Key (DECISIONS.md §4), new for each run unless
// --idempotency-key names one: the SDK never repeats a POST, and a person who does (after a dropped
// connection) with the same key gets the first answer again instead of a second reinstall.
import { randomUUID } from 'node:crypto';
import {
  isSvcNetworkError,
  isSvcTimeoutError,
  type FinishedOperation,
  type SessionClient,
  type SvcClient,
} from '@svcplatform/sdk';
import type { ParsedInput, Runnable } from './argv/spec.js';
import { CliError, UsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { BACKUP_COLUMNS, DOMAIN_CONNECT_COLUMNS, RESOURCE_COLUMNS } from './output/columns.js';
import { progressReporter } from './output/operation-progress.js';
export { schedulesTable } from './output/schedules-table.js';
export { metricsCharts } from './output/metrics-chart.js';
import { isRecord, renderTable } from './output/table.js';
import { writeResult } from './output/write-result.js';
import { Prompter } from './prompt.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings, type Settings } from './settings.js';

type Client = SvcClient | SessionClient;

/** What a generated command's request answered, and the client that sent it (to go on polling with). */
export interface Answered {
  answer: unknown;
  client: Client;
}

/**
 * The exit code of an operation that failed or was cancelled: the request was accepted, and the
 * action failed on the platform's side, which is what exit 7 (server error) tells a script.
 */
export const OPERATION_FAILED = ExitCode.server;

export interface ReinstallOptions {
  image: string;
  yes?: boolean;
  wait?: boolean;
  idempotencyKey?: string;
}

/** `vps reinstall ID RESOURCE_ID --image IMAGE [--yes] [--wait]`. */
export async function runReinstall(input: ParsedInput): Promise<void> {
  const [id, resourceId] = input.args as [string, string];
  const opts = input.options as unknown as ReinstallOptions;
  const key = idempotencyKey(opts.idempotencyKey);
  const prompter = new Prompter();
  try {
    // Refused before anything else: a script without --yes must learn it without a request made.
    if (!opts.yes && !prompter.isTerminal) {
      throw new UsageError(
        'a reinstall erases all data on the machine: confirm it with --yes (stdin is not a terminal to ask on); nothing was started',
      );
    }
    const settings = await resolveSettings(input.globals as GlobalFlags);
    requireSignIn(settings);
    if (!opts.yes) {
      const answer = await prompter.ask(
        `Reinstall ${resourceId} with ${opts.image}? All data on it is erased [y/N] `,
      );
      if (!/^\s*y(es)?\s*$/i.test(answer ?? '')) throw new UsageError('not confirmed; nothing was started');
    }
    const client = await openClient(settings);
    const accepted = await startOnce(key, () =>
      client.vpsReinstall({
        path: { id, resource_id: resourceId },
        header: { 'Idempotency-Key': key },
        body: { confirm: true, os_image: opts.image },
      }),
    );
    await writeResult(accepted, settings);
    if (opts.wait) await waitForEnd(client, settings, accepted.service_instance_id, accepted.operation_id);
  } finally {
    prompter.close();
  }
}

export interface PowerOptions {
  wait?: boolean;
  idempotencyKey?: string;
}

/** `power start|stop|restart ID [--wait]`. */
export async function runPower(input: ParsedInput, action: 'start' | 'stop' | 'restart'): Promise<void> {
  const [id] = input.args as [string];
  const opts = input.options as unknown as PowerOptions;
  const key = idempotencyKey(opts.idempotencyKey);
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  const accepted = await startOnce(key, () =>
    client.serviceInstancePower({ path: { id }, header: { 'Idempotency-Key': key }, body: { action } }),
  );
  await writeResult(accepted, settings);
  if (opts.wait) await waitForEnd(client, settings, accepted.service_instance_id, accepted.operation_id);
}

export interface BackupOptions {
  name?: string;
  yes?: boolean;
  wait?: boolean;
  idempotencyKey?: string;
}

/** `backups create ID RESOURCE_ID [--name NAME] [--wait]`. */
export async function runBackupCreate(input: ParsedInput): Promise<void> {
  const [id, resourceId] = input.args as [string, string];
  const opts = input.options as unknown as BackupOptions;
  const key = idempotencyKey(opts.idempotencyKey);
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  const accepted = await startOnce(key, () =>
    client.backupCreate({
      path: { id, resource_id: resourceId },
      header: { 'Idempotency-Key': key },
      ...(opts.name === undefined ? {} : { body: { name: opts.name } }),
    }),
  );
  await writeResult(accepted, settings);
  if (opts.wait) await waitForEnd(client, settings, id, accepted.operation_id);
}

/** `backups restore ID RESOURCE_ID BACKUP_ID [--yes] [--wait]`: asks first, as a reinstall does. */
export async function runBackupRestore(input: ParsedInput): Promise<void> {
  const [id, resourceId, backupId] = input.args as [string, string, string];
  const opts = input.options as unknown as BackupOptions;
  const key = idempotencyKey(opts.idempotencyKey);
  const prompter = new Prompter();
  try {
    if (!opts.yes && !prompter.isTerminal) {
      throw new UsageError(
        'a restore replaces everything on the volume: confirm it with --yes (stdin is not a terminal to ask on); nothing was started',
      );
    }
    const settings = await resolveSettings(input.globals as GlobalFlags);
    requireSignIn(settings);
    if (!opts.yes) {
      const answer = await prompter.ask(
        `Restore backup ${backupId} onto volume ${resourceId}? Everything on it now is replaced, and the service is stopped meanwhile [y/N] `,
      );
      if (!/^\s*y(es)?\s*$/i.test(answer ?? '')) throw new UsageError('not confirmed; nothing was started');
    }
    const client = await openClient(settings);
    const accepted = await startOnce(key, () =>
      client.backupRestore({
        path: { id, resource_id: resourceId, backup_id: backupId },
        header: { 'Idempotency-Key': key },
      }),
    );
    await writeResult(accepted, settings);
    if (opts.wait) await waitForEnd(client, settings, id, accepted.operation_id);
  } finally {
    prompter.close();
  }
}

/** `operations wait ID OPERATION_ID`: follows the operation, then prints it as `operations show` would. */
export async function runOperationWait(input: ParsedInput): Promise<void> {
  const [id, operationId] = input.args as [string, string];
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  await waitForEnd(client, settings, id, operationId, (done) => writeResult(done, settings));
}

/**
 * `admin subscriptions create`: the generated command with an Idempotency-Key always sent (a new one
 * unless --idempotency-key gives it), and with --wait, the provisioning followed to its end.
 */
export async function runSubscriptionCreate(
  generated: Runnable,
  keyOption: string,
  answered: () => Answered | null,
  input: ParsedInput,
): Promise<void> {
  const key = idempotencyKey(input.options[keyOption] as string | undefined);
  await startOnce(key, () => generated.run({ ...input, options: { ...input.options, [keyOption]: key } }));
  const last = answered();
  if (input.options.wait !== true || !last) return;
  const created = last.answer as { service_instance_id: string; operation_id: string };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  await waitForEnd(last.client, settings, created.service_instance_id, created.operation_id);
}

export function idempotencyKey(given: string | undefined): string {
  if (given === undefined) return randomUUID();
  if (given.trim() === '') throw new UsageError('--idempotency-key is empty');
  return given;
}

/**
 * Sends the request that starts an operation. When no answer came, the server may have acted all the
 * same: the key is shown so the command can be run again without starting the action twice.
 */
export async function startOnce<T>(key: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (isSvcNetworkError(err) || isSvcTimeoutError(err)) {
      process.stderr.write(
        `note: the request may have reached the server; run the command again with --idempotency-key ${key} to get its answer without starting a second one\n`,
      );
    }
    throw err;
  }
}

/**
 * Polls until the operation ends, drawing its progress on stderr (not with --quiet), and turns a
 * failed or cancelled one into OPERATION_FAILED with its error. `show` prints the final operation
 * first, whatever the outcome.
 */
export async function waitForEnd(
  client: Client,
  settings: Settings,
  instanceId: string,
  operationId: string,
  show?: (done: FinishedOperation) => Promise<void>,
): Promise<void> {
  const progress = settings.quiet ? null : progressReporter(process.stderr);
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort(INTERRUPTED);
  process.once('SIGINT', onInterrupt);
  let done: FinishedOperation;
  try {
    done = await client.waitForOperation(instanceId, operationId, {
      signal: interrupt.signal,
      onProgress: (op) => progress?.update(op),
    });
  } catch (err) {
    progress?.finish();
    if (err !== INTERRUPTED) throw err;
    process.stderr.write(
      `stopped waiting; operation ${operationId} goes on. Follow it again with: svcctl operations wait ${instanceId} ${operationId}\n`,
    );
    // Ended by the signal as the shell expects (exit status 130), now that the way back is said.
    process.kill(process.pid, 'SIGINT');
    throw new CliError('interrupted');
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    progress?.finish();
  }
  await show?.(done);
  if (done.status === 'succeeded') return;
  const where = done.phase ? ` in phase ${done.phase}` : '';
  const why = done.error ? `: ${done.error}` : '';
  const verb = done.status === 'cancelled' ? 'was cancelled' : 'failed';
  throw new CliError(`operation ${operationId} ${verb}${where}${why}`, OPERATION_FAILED);
}

const INTERRUPTED = new Error('interrupted');

/** Whether the answer will be printed as a table (json and yaml print it whole). */
export async function printsTable(input: ParsedInput): Promise<boolean> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  return settings.outputFormat === 'table' && !settings.quiet;
}

/** `backups list` as a table: one row per backup, newest first, then how many of the ceiling are used. */
export async function backupsTable(answer: unknown): Promise<unknown> {
  if (!isRecord(answer) || !Array.isArray(answer.backups)) return answer;
  return `${renderTable(answer.backups, BACKUP_COLUMNS).trimEnd()}\n\n${answer.backups.length} of ${String(answer.max_backups)} backups\n`;
}

/** `domains connect list` as a table: one row per link, then how many of the 20 are used. */
export async function domainConnectTable(answer: unknown): Promise<unknown> {
  if (!isRecord(answer) || !Array.isArray(answer.links)) return answer;
  const note =
    answer.supported === true
      ? ''
      : '\nno Domain Connect template is configured here: links carry no apply URL\n';
  return `${renderTable(answer.links, DOMAIN_CONNECT_COLUMNS).trimEnd()}\n\n${answer.links.length} of 20 links\n${note}`;
}

/**
 * `resources list` and `subscriptions resources` as a table: the service instance a subscription made,
 * one row per resource, and the inconsistency the seed says a consumer must surface (document 2,
 * "Service-instance resource list").
 */
export async function resourcesTable(answer: unknown): Promise<unknown> {
  if (!isRecord(answer) || !Array.isArray(answer.resources)) return answer;
  const lines: string[] = [];
  const instance = answer.service_instance;
  if (isRecord(instance)) {
    lines.push(
      `service instance ${String(instance.name)} (${String(instance.slug)}, ${String(instance.id)})`,
      '',
    );
  }
  lines.push(renderTable(answer.resources, RESOURCE_COLUMNS).trimEnd());
  if (answer.primary_role_is_inconsistent === true) {
    lines.push(
      '',
      'warning: two live resources have the primary role, so none is marked primary (primary_role_is_inconsistent)',
    );
  }
  return `${lines.join('\n')}\n`;
}
