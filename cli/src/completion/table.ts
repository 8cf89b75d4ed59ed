// The command tree as the completion engine's table (engine.ts describes its lines). Walked from the
// root svcctl runs, every command built as the parser would build it, so a command, flag or enum value
// added anywhere (a new operation in the spec, an override, a built-in command) is completed without
// being listed here.
import { HELP_OPTION, VERSION_OPTION } from '../argv/parse.js';
import type { ArgumentSpec, CommandSpec, OptionSpec } from '../argv/spec.js';

/** One command of the tree with its words and, when it runs, what it takes. */
export interface WalkedCommand {
  readonly words: readonly string[];
  readonly spec: CommandSpec;
  readonly hidden: boolean;
  readonly options: readonly OptionSpec[];
  readonly arguments: readonly ArgumentSpec[];
}

/** Every command below `root` (itself first), depth first in listing order; hidden ones too. */
export async function* walkCommands(
  root: CommandSpec,
  words: readonly string[] = [],
  hidden = false,
): AsyncGenerator<WalkedCommand> {
  const runnable = await root.runnable?.();
  yield {
    words,
    spec: root,
    hidden,
    options: runnable?.options ?? [],
    arguments: runnable?.arguments ?? [],
  };
  for (const child of root.subcommands()) {
    yield* walkCommands(child, [...words, child.name], hidden || child.hidden === true);
  }
}

/** Tabs and line breaks would break the table's lines; a description is one short line. */
function oneLine(text: string, max = 90): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function optionLines(path: string, option: OptionSpec): string[] {
  const takes = option.value !== undefined ? '1' : '0';
  const description = oneLine(option.description);
  const values = option.choices ?? option.values ?? [];
  return [option.long, ...(option.short ? [option.short] : [])].flatMap((flag) => [
    ['o', path, flag, takes, description].join('\t'),
    ...values.map((v) => ['v', path, flag, v].join('\t')),
  ]);
}

export async function completionTable(root: CommandSpec, globals: readonly OptionSpec[]): Promise<string> {
  const lines: string[] = [];
  for (const option of [...globals, HELP_OPTION]) lines.push(...optionLines('*', option));
  lines.push(...optionLines('', VERSION_OPTION).filter((l) => l.startsWith('o\t')));
  lines.push(['c', '', 'help', 'show help for a command'].join('\t'));
  for await (const command of walkCommands(root)) {
    const path = command.words.join(' ');
    for (const child of command.spec.subcommands()) {
      const kind = command.hidden || child.hidden ? 'C' : 'c';
      lines.push([kind, path, child.name, oneLine(child.summary)].join('\t'));
    }
    for (const option of command.options) lines.push(...optionLines(path, option));
    for (const [i, argument] of command.arguments.entries()) {
      for (const value of argument.values ?? []) lines.push(['a', path, String(i), value].join('\t'));
    }
  }
  return `${lines.join('\n')}\n`;
}
