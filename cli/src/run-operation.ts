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
  const request = buildRequest(op, input.args, values, data);
  const { path, query, headers, body } = request;
  if (opts.all && query.page !== undefined) {
    throw new UsageError('--all walks every page from the first; leave out --page');
  }
  if (op.security.length > 0) requireSignIn(settings);
  const client = await openClient(settings);
  const columns = tableColumns(op.operationId);
  if (opts.all) {
    // The SDK's paginator asks for the next page only once this one is written out.
    const items = client.paginate(op.operationId, { path, query, header: headers });
    await writeStream(items, {
      format: settings.outputFormat,
      quiet: settings.quiet,
      columns,
      envelope: (count) => wholeListMeta(count, pageSizeOf(op, query)),
    });
    return;
  }
  hooks.sending?.(request);
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

/**
 * `--all` in json and yaml keeps the shape of one page, `{ data, meta }`, so one script reads both: the
 * whole list is the one page there is (`page` 1 of 1, every item). An empty list has 0 pages, of the
 * size the walk asked for.
 */
export function wholeListMeta(count: number, walkPageSize: number) {
  return {
    page: 1,
    page_size: count > 0 ? count : walkPageSize,
    total_items: count,
    total_pages: count > 0 ? 1 : 0,
  };
}

/** The page size the walk asks for: --page-size, else the most the operation allows (the SDK's default). */
function pageSizeOf(op: CliOperation, query: Record<string, unknown>): number {
  if (typeof query.page_size === 'number') return query.page_size;
  const param = op.parameters.find((p) => p.in === 'query' && p.name === 'page_size') as
    { maximum?: unknown } | undefined;
  return typeof param?.maximum === 'number' ? param.maximum : 1;
}
