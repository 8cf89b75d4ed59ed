// `files write` as generated, plus --from-file PATH|-: a file's text given inline with --content runs
// into the shell's argument limit ("Argument list too long") well below the API's 1 MiB cap.
import type { OptionSpec } from '../argv/spec.js';
import type { CliOperation } from '../operation.js';
import type { OperationOverride } from './operation-overrides.js';

/** The API's cap on `content` once UTF-8 encoded (fileWrite's 422 `file-too-large`). */
export const WRITE_CAP_BYTES = 1024 * 1024;

const FROM_FILE: OptionSpec = {
  long: '--from-file',
  value: '<path>',
  key: 'fromFile',
  group: 'Body fields:',
  description: "the file's new text read from PATH (- for stdin) instead of --content; UTF-8, at most 1 MiB",
};

export const fileWriteOverride: OperationOverride = {
  async runnable(op: CliOperation) {
    const { operationRunnable } = await import('./operation-command.js');
    const generated = operationRunnable(op);
    const contentKey = generated.options.find((o) => o.long === '--content')?.key;
    if (!contentKey) throw new Error('fileWrite has no --content flag');
    return {
      ...generated,
      options: [...generated.options, FROM_FILE],
      async run(input) {
        const from = input.options.fromFile as string | undefined;
        if (from === undefined) return generated.run(input);
        const { readContent } = await import('../file-content.js');
        const content = await readContent(from, input.options[contentKey] !== undefined);
        return generated.run({ ...input, options: { ...input.options, [contentKey]: content } });
      },
    };
  },
};
