// What a generated command does when it runs: settings, request, call, output. Imported lazily by
// the command's action.
import type { Command } from 'commander';
import type { BoundInput } from './commands/operation-command.js';
import { readData } from './data-source.js';
import { collectGlobalFlags } from './global-options.js';
import { isBinaryResponse, type CliOperation } from './operation.js';
import { checkBinaryTarget, writeResult } from './output/write-result.js';
import { buildRequest } from './request-input.js';
import { openClient } from './sdk-client.js';
import { resolveSettings } from './settings.js';

export async function runOperation(
  op: CliOperation,
  cmd: Command,
  positionals: readonly string[],
  bound: readonly BoundInput[],
): Promise<void> {
  const settings = await resolveSettings(collectGlobalFlags(cmd));
  const opts = cmd.opts<{ data?: string; output?: string }>();
  const target = { file: opts.output };
  if (isBinaryResponse(op)) checkBinaryTarget(target, op.responseType ?? 'binary');
  const data = opts.data === undefined ? undefined : await readData(opts.data);
  const values = bound.map(({ input, key }) => ({ input, value: cmd.getOptionValue(key) as unknown }));
  const { path, query, headers, body } = buildRequest(op, positionals, values, data);
  const client = await openClient(settings);
  const result = await client.request(op.operationId, {
    path,
    query,
    header: headers,
    ...(body === undefined ? {} : { body }),
  });
  await writeResult(result, settings, target);
}
