// `svcctl completion SHELL`: the command tree svcctl runs, as a completion script for SHELL.
import type { ParsedInput } from './argv/spec.js';
import { cliVersion } from './cli-version.js';
import { completionScript, SHELLS, type Shell } from './completion/scripts.js';
import { completionTable } from './completion/table.js';
import { UsageError } from './errors.js';
import { GLOBAL_OPTIONS } from './global-options.js';

export async function runCompletion(input: ParsedInput): Promise<void> {
  const [shell = ''] = input.args;
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(`SHELL must be one of ${SHELLS.join(', ')}; got "${shell}"`);
  }
  // main.ts is loaded already (it ran this command); imported here, not at the top, as main imports
  // every command definition, this one included.
  const { rootCommand } = await import('./main.js');
  const table = await completionTable(rootCommand(), GLOBAL_OPTIONS);
  process.stdout.write(completionScript(shell as Shell, table, cliVersion()));
}
