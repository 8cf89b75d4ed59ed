// What a generated command does when it runs: settings, request, call, output. Imported lazily by
// the command's action.
import type { ParsedInput } from './argv/spec.js';
import type { BoundInput, OperationHooks } from './commands/operation-command.js';
import { readData } from './data-source.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { isBinaryResponse, type CliOperation } from './operation.js';
import { tableColumns } from './output/columns.js';
import { writeStream } from './output/stream.js';
import { checkBinaryTarget, writeResult } from './output/write-result.js';
import { buildRequest } from './request-input.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

export async function runOperation(
  op: CliOperation,
  input: ParsedInput,
  bound: readonly BoundInput[],
  hooks: OperationHooks = {},
): Promise<void> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const opts = input.options as { data?: string; output?: string; all?: boolean };
  const target = { file: opts.output };
  if (isBinaryResponse(op)) checkBinaryTarget(target, op.responseType ?? 'binary');
  const data = opts.data === undefined ? undefined : await readData(opts.data);
  const values = bound.map(({ input: flag, key }) => ({ input: flag, value: input.options[key] }));
  const { path, query, headers, body } = buildRequest(op, input.args, values, data);
  if (opts.all && query.page !== undefined) {
    throw new UsageError('--all walks every page from the first; leave out --page');
  }
  if (op.security.length > 0) requireSignIn(settings);
  const client = await openClient(settings);
  const columns = tableColumns(op.operationId);
  if (opts.all) {
    // The SDK's paginator asks for the next page only once this one is written out.
    const items = client.paginate(op.operationId, { path, query, header: headers });
    await writeStream(items, { format: settings.outputFormat, quiet: settings.quiet, columns });
    return;
  }
  const result = await client.request(op.operationId, {
    path,
    query,
    header: headers,
    ...(body === undefined ? {} : { body }),
  });
  await writeResult(
    hooks.decorate ? await hooks.decorate(result, client) : result,
    settings,
    target,
    columns,
  );
}
