// What a generated command does when it runs: settings, request, call, output. Imported lazily by
// the command's action.
import type { ParsedInput } from './argv/spec.js';
import type { BoundInput, OperationHooks } from './commands/operation-command.js';
import { readData } from './data-source.js';
import type { GlobalFlags } from './global-options.js';
import { isBinaryResponse, type CliOperation } from './operation.js';
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
  const opts = input.options as { data?: string; output?: string };
  const target = { file: opts.output };
  if (isBinaryResponse(op)) checkBinaryTarget(target, op.responseType ?? 'binary');
  const data = opts.data === undefined ? undefined : await readData(opts.data);
  const values = bound.map(({ input: flag, key }) => ({ input: flag, value: input.options[key] }));
  const { path, query, headers, body } = buildRequest(op, input.args, values, data);
  if (op.security.length > 0) requireSignIn(settings);
  const client = await openClient(settings);
  const result = await client.request(op.operationId, {
    path,
    query,
    header: headers,
    ...(body === undefined ? {} : { body }),
  });
  await writeResult(hooks.decorate ? await hooks.decorate(result, client) : result, settings, target);
}
