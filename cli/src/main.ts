// svcctl's entry: builds the commander program for this argv and runs it. Only the commands argv
// can reach are built in full; the rest are stubs that carry a name and a summary for help
// listings. Everything a command needs to run (SDK, yaml, rendering) is imported by its action.
import { Command, CommanderError, Help, Option } from './commander.js';
import { cliVersion } from './cli-version.js';
import { buildCommandTree, commandWords, describeGroup, type CommandNode } from './command-tree.js';
import { ExitCode, exitCodeHelp } from './exit-codes.js';
import { addGlobalOptions, GLOBAL_FLAGS_WITH_VALUE } from './global-options.js';
import { pathParameters } from './operation.js';
import { loadOperations } from './operation-index.js';

// One line per paragraph: commander wraps them to the terminal's width.
const DESCRIPTION = [
  'svcctl: the command line for the hosting control plane API.',
  '',
  "Commands are generated from the API's operations: path parameters are positional arguments, query parameters and body fields are --flags, and every command explains itself with --help.",
].join('\n');

const EPILOG = `
Global options may come before the command words or after them.
Environment: SVCCTL_BASE_URL, SVCCTL_PROFILE, SVCCTL_TOKEN, SVCCTL_OUTPUT, SVCCTL_CONFIG_DIR.
Files: config.yaml and credentials.yaml in $SVCCTL_CONFIG_DIR, else $XDG_CONFIG_HOME/svcctl,
else ~/.config/svcctl.

${exitCodeHelp()}`;

export async function main(argv: readonly string[]): Promise<number> {
  const args = rewriteHelpCommand(argv);
  const program = createProgram();
  try {
    const { root } = buildCommandTree(loadOperations());
    const words = commandWords(args, root, GLOBAL_FLAGS_WITH_VALUE);
    const first = firstWord(args);
    program.commandsGroup('API commands:');
    await addChildren(program, root, words);
    program.commandsGroup('Other commands:');
    const api = program.command('api').summary('call any route: svcctl api GET /public/incidents');
    if (first === 'api') (await import('./commands/api-command.js')).defineApiCommand(api);
    else stubTerms.set(api, 'api [options] <method> <path>');
    const config = program
      .command('config')
      .summary('show and change settings (base URL, output format) per profile');
    if (first === 'config') (await import('./commands/config-command.js')).defineConfigCommand(config);
    else stubTerms.set(config, 'config <command>');
    program.helpCommand('help [command...]', 'show help for a command');
    await program.parseAsync(args, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError) return exitCodeForCommander(err);
    return reportFailure(err);
  }
}

function createProgram(): Command {
  const program = new Command('svcctl')
    .description(DESCRIPTION)
    .usage('[global options] <command> [arguments] [options]')
    .version(cliVersion(), '-V, --version', 'print the version')
    // The root stops at the first command word, so a leaf's own --token body field is the leaf's.
    .enablePositionalOptions()
    .exitOverride()
    .showSuggestionAfterError()
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ subcommandTerm })
    .addHelpOption(new Option('-h, --help', 'show help for the command').helpGroup('Global options:'))
    .addHelpText('after', EPILOG);
  program.options.find((o) => o.long === '--version')?.helpGroup('Global options:');
  addGlobalOptions(program);
  return program;
}

const stubTerms = new WeakMap<Command, string>();

// Stubs carry no arguments or options, so the listing's "get [options] <hostname>" comes from here.
function subcommandTerm(this: Help, cmd: Command): string {
  return stubTerms.get(cmd) ?? Help.prototype.subcommandTerm.call(this, cmd);
}

async function addChildren(parent: Command, node: CommandNode, words: readonly string[]): Promise<void> {
  const [next, ...rest] = words;
  for (const child of node.children.values()) {
    const cmd = parent.command(child.word).summary(describeGroup(child));
    if (child.word !== next) {
      stubTerms.set(cmd, termFor(child));
      continue;
    }
    if (child.operation) {
      const { defineOperationCommand } = await import('./commands/operation-command.js');
      defineOperationCommand(cmd, child.operation);
    } else {
      cmd.description(`${child.word}: ${describeGroup(child, Infinity)}`);
    }
    await addChildren(cmd, child, rest);
  }
}

function termFor(node: CommandNode): string {
  const op = node.operation;
  if (!op) return `${node.word} <command>`;
  const hasOptions = op.parameters.some((p) => p.in !== 'path') || op.body !== null;
  const args = pathParameters(op)
    .map((p) => ` <${p.name}>`)
    .join('');
  return `${node.word}${hasOptions ? ' [options]' : ''}${args}`;
}

/** `svcctl help public incidents` → `svcctl public incidents --help`, at any depth. */
function rewriteHelpCommand(argv: readonly string[]): string[] {
  return argv[0] === 'help' ? [...argv.slice(1), '--help'] : [...argv];
}

function firstWord(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') return argv[i + 1];
    if (!arg.startsWith('-') || arg === '-') return arg;
    if (!arg.includes('=') && GLOBAL_FLAGS_WITH_VALUE.has(arg)) i += 1;
  }
  return undefined;
}

function exitCodeForCommander(err: CommanderError): number {
  switch (err.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return ExitCode.ok;
    default:
      // Unknown command or option, missing argument, bad value, and help shown because a group was
      // called without its command: commander has already printed the reason.
      return ExitCode.usage;
  }
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
