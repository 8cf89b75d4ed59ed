// svcctl's entry: parses the command line against the command tree and runs, or explains, the
// command it names. Start-up loads only this, the argv parser, help and the operation index; a
// command's options are built when the command line reaches it, and everything it needs to run
// (SDK, yaml, rendering) is imported then.
// The `./operations` subpath is the SDK's generated operation index alone, without its HTTP client.
import { operations } from '@svcplatform/sdk/operations';
// Static, though only --help needs it: a dynamic import() costs more than this module's load.
import { renderHelp } from './argv/help.js';
import { CommandLineError, parseCommandLine } from './argv/parse.js';
import type { CommandSpec } from './argv/spec.js';
import { apiCommand } from './commands/api-command.js';
import { completionCommand } from './commands/completion-command.js';
import { whoamiCommand } from './commands/whoami-command.js';
import { configCommand } from './commands/config-command.js';
import { operationOverrides } from './commands/operation-overrides.js';
import { signInCommands } from './commands/sign-in-commands.js';
import { buildCommandTree, treeCommands } from './command-tree.js';
import { UsageError } from './errors.js';
import { ExitCode, exitCodeHelp } from './exit-codes.js';
import { GLOBAL_OPTIONS } from './global-options.js';
import type { CliOperation } from './operation.js';

const PROGRAM = 'svcctl';

const DESCRIPTION = [
  'svcctl: the command line for the hosting control plane API.',
  '',
  "Commands are generated from the API's operations: path parameters are positional arguments, query parameters and body fields are --flags, and every command explains itself with --help.",
  '',
  "Sign in with 'svcctl login': the session is saved for the profile and refreshed as needed. An API token given with --token or SVCCTL_TOKEN is used instead when present.",
].join('\n');

const EPILOG = `
Global options may come before the command words or after them.
Environment: SVCCTL_BASE_URL, SVCCTL_PROFILE, SVCCTL_TOKEN, SVCCTL_OUTPUT, SVCCTL_CONFIG_DIR.
Files: config.yaml and credentials.yaml (the session of 'svcctl login', mode 0600) in
$SVCCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/svcctl, else ~/.config/svcctl.

${exitCodeHelp()}`;

export function rootCommand(): CommandSpec {
  const { root } = buildCommandTree(Object.values(operations as Record<string, CliOperation>));
  const commands = [
    ...signInCommands,
    ...treeCommands(root, 'API commands:', operationOverrides),
    apiCommand,
    configCommand,
    completionCommand,
    whoamiCommand,
  ];
  return { name: PROGRAM, summary: '', term: PROGRAM, description: DESCRIPTION, subcommands: () => commands };
}

export async function main(argv: readonly string[]): Promise<number> {
  let words: readonly string[] = [];
  try {
    const result = await parseCommandLine(rootCommand(), GLOBAL_OPTIONS, rewriteHelpCommand(argv));
    if (result.kind === 'version') {
      const { cliVersion } = await import('./cli-version.js');
      process.stdout.write(`${cliVersion()}\n`);
      return ExitCode.ok;
    }
    if (result.kind === 'help') {
      // A group called without its command is a usage error: its help goes to stderr.
      const stream = result.implicit ? process.stderr : process.stdout;
      const text = renderHelp({
        program: PROGRAM,
        path: result.path,
        runnable: result.runnable,
        globals: GLOBAL_OPTIONS,
        ...(result.path.length === 1 ? { epilog: EPILOG } : {}),
        width: stream.isTTY ? stream.columns : 80,
      });
      stream.write(text);
      return result.implicit ? ExitCode.usage : ExitCode.ok;
    }
    words = result.path.slice(1).map((c) => c.name);
    await result.runnable.run({ words, args: result.args, options: result.options, globals: result.globals });
    // A command that passes on another program's code (`shell` exits with the shell's) sets exitCode;
    // bin.ts assigns what this returns, so returning 0 here would overwrite it.
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      const at = err instanceof CommandLineError ? err.words : words;
      process.stderr.write(`error: ${err.message}\n(see '${[PROGRAM, ...at, '--help'].join(' ')}')\n`);
      return ExitCode.usage;
    }
    return reportFailure(err);
  }
}

/** `svcctl help public incidents` → `svcctl public incidents --help`, at any depth. */
function rewriteHelpCommand(argv: readonly string[]): string[] {
  return argv[0] === 'help' ? [...argv.slice(1), '--help'] : [...argv];
}

async function reportFailure(err: unknown): Promise<number> {
  try {
    const { describeFailure } = await import('./describe-failure.js');
    const { text, exitCode } = describeFailure(err);
    process.stderr.write(text);
    return exitCode;
  } catch {
    // describe-failure loads the SDK; if that is what broke, still say something useful.
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return ExitCode.failure;
  }
}
