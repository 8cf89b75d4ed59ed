// The command line → which command, its arguments and option values. Semantics users know from
// git and commander: options may come before, between and after the command words; `--x=v`,
// `--x v`, `-ov`, `-o v` and grouped short flags (`-qo json`); `--` ends the options. A runnable
// command's own options shadow global options of the same name after its words.
import { UsageError } from '../errors.js';
import type { CommandSpec, OptionSpec, Runnable } from './spec.js';

export const HELP_OPTION: OptionSpec = {
  long: '--help',
  short: '-h',
  description: 'show help for the command',
  group: 'Global options:',
  key: 'help',
};

export const VERSION_OPTION: OptionSpec = {
  long: '--version',
  short: '-V',
  description: 'print the version',
  group: 'Global options:',
  key: 'version',
};

export type ParseResult =
  | { kind: 'help'; path: readonly CommandSpec[]; runnable: Runnable | undefined; implicit: boolean }
  | { kind: 'version' }
  | {
      kind: 'run';
      path: readonly CommandSpec[];
      runnable: Runnable;
      args: string[];
      options: Record<string, unknown>;
      globals: Record<string, unknown>;
    };

/** A usage error that knows which command it concerns, for the "--help" hint. */
export class CommandLineError extends UsageError {
  constructor(
    message: string,
    readonly words: readonly string[],
  ) {
    super(message);
  }
}

export async function parseCommandLine(
  root: CommandSpec,
  globals: readonly OptionSpec[],
  argv: readonly string[],
): Promise<ParseResult> {
  const path: CommandSpec[] = [root];
  let current = root;
  let runnable = await root.runnable?.();
  const args: string[] = [];
  const options: Record<string, unknown> = {};
  const globalValues: Record<string, unknown> = {};
  let help = false;
  let version = false;
  let firstError: string | undefined;
  const fail = (message: string) => {
    firstError ??= message;
  };
  const words = () => path.slice(1).map((c) => c.name);

  let active = activeOptions(runnable, globals, true);
  const store = (option: OptionSpec, raw: string | undefined) => {
    if (option === HELP_OPTION) return void (help = true);
    if (option === VERSION_OPTION) return void (version = true);
    const target = globals.includes(option) ? globalValues : options;
    if (raw === undefined) return void (target[option.key] = option.flagValue ?? true);
    if (option.choices && !option.choices.includes(raw)) {
      return fail(
        `option '${optionTerm(option)}' argument '${raw}' is invalid. Allowed choices are ${option.choices.join(', ')}.`,
      );
    }
    try {
      target[option.key] = option.parse ? option.parse(raw, target[option.key]) : raw;
    } catch (err) {
      fail(`option '${optionTerm(option)}' argument '${raw}' is invalid: ${(err as Error).message}`);
    }
  };

  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (arg.length > 1 && arg.startsWith('-') && !/^-\d/.test(arg)) {
      if (arg.startsWith('--')) {
        const eq = arg.indexOf('=');
        const name = eq === -1 ? arg : arg.slice(0, eq);
        const option = active.get(name);
        if (!option) {
          fail(unknownOption(name, active));
        } else if (option.value === undefined) {
          if (eq !== -1) fail(`option '${optionTerm(option)}' does not take a value`);
          else store(option, undefined);
        } else if (eq !== -1) {
          store(option, arg.slice(eq + 1));
        } else if (i + 1 < argv.length) {
          store(option, argv[(i += 1)]);
        } else {
          fail(`option '${optionTerm(option)}' argument missing`);
        }
        continue;
      }
      // One or more short flags: `-q`, `-ojson`, `-qo json`.
      for (let j = 1; j < arg.length; j += 1) {
        const option = active.get(`-${arg[j]}`);
        if (!option) {
          fail(unknownOption(`-${arg[j]}`, active));
          break;
        }
        if (option.value === undefined) {
          store(option, undefined);
          continue;
        }
        if (j + 1 < arg.length) store(option, arg.slice(j + 1));
        else if (i + 1 < argv.length) store(option, argv[(i += 1)]);
        else fail(`option '${optionTerm(option)}' argument missing`);
        break;
      }
      continue;
    }
    // An operand: a command word while one matches and no argument has been taken yet.
    const child = args.length === 0 ? current.subcommands().find((c) => c.name === arg) : undefined;
    if (child) {
      path.push(child);
      current = child;
      runnable = await child.runnable?.();
      active = activeOptions(runnable, globals, false);
      continue;
    }
    if (!runnable) {
      // Keep scanning: a --help further on still answers with this group's help.
      fail(unknownCommand(arg, current));
      continue;
    }
    args.push(arg);
  }

  if (help) return { kind: 'help', path, runnable, implicit: false };
  if (version && path.length === 1) return { kind: 'version' };
  if (firstError !== undefined) throw new CommandLineError(firstError, words());
  if (!runnable) return { kind: 'help', path, runnable: undefined, implicit: true };

  const required = runnable.arguments.filter((a) => a.required).length;
  if (args.length < required) {
    throw new CommandLineError(
      `missing required argument '${runnable.arguments[args.length]!.name}'`,
      words(),
    );
  }
  if (args.length > runnable.arguments.length && !runnable.arguments.at(-1)?.variadic) {
    const expected = runnable.arguments.length;
    throw new CommandLineError(
      `too many arguments for '${words().join(' ')}': expected ${expected} argument${expected === 1 ? '' : 's'}, got ${args.length}`,
      words(),
    );
  }
  for (const option of runnable.options) {
    if (option.mandatory && options[option.key] === undefined) {
      throw new CommandLineError(`required option '${optionTerm(option)}' not specified`, words());
    }
  }
  return { kind: 'run', path, runnable, args, options, globals: globalValues };
}

/** The options in force: the command's own, then the global ones whose flags it leaves free. */
function activeOptions(
  runnable: Runnable | undefined,
  globals: readonly OptionSpec[],
  atRoot: boolean,
): Map<string, OptionSpec> {
  const map = new Map<string, OptionSpec>();
  const add = (o: OptionSpec) => {
    if (!map.has(o.long)) map.set(o.long, o);
    if (o.short && !map.has(o.short)) map.set(o.short, o);
  };
  runnable?.options.forEach(add);
  add(HELP_OPTION);
  if (atRoot) add(VERSION_OPTION);
  globals.forEach(add);
  return map;
}

export function optionTerm(option: OptionSpec): string {
  const flags = option.short ? `${option.short}, ${option.long}` : option.long;
  return option.value ? `${flags} ${option.value}` : flags;
}

function unknownOption(name: string, active: Map<string, OptionSpec>): string {
  const suggestion = closest(
    name,
    [...active.keys()].filter((k) => k.startsWith('--')),
  );
  return `unknown option '${name}'${suggestion ? `\n(Did you mean ${suggestion}?)` : ''}`;
}

function unknownCommand(word: string, group: CommandSpec): string {
  const suggestion = closest(
    word,
    group.subcommands().map((c) => c.name),
  );
  return `unknown command '${word}'${suggestion ? `\n(Did you mean ${suggestion}?)` : ''}`;
}

/** The most similar candidate, if any is similar enough to be a likely typo. */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(word.length * 0.4)) ? best : undefined;
}

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions (`incidnets`). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j += 1) d[0]![j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
