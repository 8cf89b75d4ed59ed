// Help text for a command, in the layout commander made familiar: usage, description, then aligned
// sections (arguments, option groups, subcommands), wrapped to the terminal's width.
import { optionTerm, HELP_OPTION, VERSION_OPTION } from './parse.js';
import type { CommandSpec, OptionSpec, Runnable } from './spec.js';

export interface HelpContext {
  program: string;
  path: readonly CommandSpec[];
  runnable: Runnable | undefined;
  globals: readonly OptionSpec[];
  /** Text after everything else (the root's epilog). */
  epilog?: string;
  width?: number;
}

export function renderHelp(ctx: HelpContext): string {
  const { path, runnable } = ctx;
  const command = path[path.length - 1]!;
  const atRoot = path.length === 1;
  const width = ctx.width ?? 80;
  const words = [ctx.program, ...path.slice(1).map((c) => c.name)].join(' ');
  const subcommands = command.subcommands().filter((c) => !c.hidden);

  const usage = [words];
  if (atRoot) usage.push('[global options] <command> [arguments] [options]');
  else {
    usage.push('[options]');
    for (const a of runnable?.arguments ?? []) {
      const name = a.variadic ? `${a.name}...` : a.name;
      usage.push(a.required ? `<${name}>` : `[${name}]`);
    }
    if (subcommands.length > 0) usage.push(runnable ? '[command]' : '<command>');
  }

  const sections = new Map<string, [string, string][]>();
  const add = (group: string, term: string, text: string) => {
    const rows = sections.get(group) ?? [];
    rows.push([term, text]);
    sections.set(group, rows);
  };
  for (const a of runnable?.arguments ?? [])
    add('Arguments:', a.variadic ? `${a.name}...` : a.name, a.description);
  const own = runnable?.options ?? [];
  const taken = new Set(own.flatMap((o) => (o.short ? [o.long, o.short] : [o.long])));
  for (const o of own) add(o.group, optionTerm(o), o.description);
  for (const o of ctx.globals) {
    if (taken.has(o.long)) continue;
    // A global option whose short flag the command took is still there by its long name.
    add(o.group, optionTerm(o.short && taken.has(o.short) ? { ...o, short: undefined } : o), o.description);
  }
  if (atRoot) add(VERSION_OPTION.group, optionTerm(VERSION_OPTION), VERSION_OPTION.description);
  add(HELP_OPTION.group, optionTerm(HELP_OPTION), HELP_OPTION.description);
  for (const c of subcommands) add(c.listGroup ?? 'Commands:', c.term, c.summary);
  if (atRoot) add('Other commands:', 'help [command...]', 'show help for a command');

  // Options first, then commands, as the eye expects; within each, in the order declared.
  const order = [...sections.keys()].sort((a, b) => rank(a) - rank(b));
  const termWidth = Math.max(...[...sections.values()].flat().map(([term]) => term.length));
  const out = [`Usage: ${usage.join(' ')}`, ''];
  const description = runnable?.description ?? command.description ?? command.summary;
  // A line that starts indented is shown as written: a request line (`PUT /api/v2/…`) is copied whole,
  // so it is never broken between the method and a path longer than the terminal.
  if (description) {
    out.push(...description.split('\n').flatMap((p) => (!p ? [''] : /^\s/.test(p) ? [p] : wrap(p, width))), '');
  }
  for (const group of order) {
    out.push(group);
    for (const [term, text] of sections.get(group)!) out.push(...row(term, text, termWidth, width));
    out.push('');
  }
  if (ctx.epilog) out.push(ctx.epilog.trim(), '');
  return out.join('\n');
}

function rank(group: string): number {
  if (group === 'Arguments:') return 0;
  if (group.endsWith('commands:') || group === 'Commands:') return 3;
  if (group === 'Global options:') return 2;
  return 1;
}

function row(term: string, text: string, termWidth: number, width: number): string[] {
  const indent = 2 + termWidth + 2;
  const lines = text ? wrap(text, Math.max(width - indent, 30)) : [''];
  return lines.map((line, i) =>
    `${i === 0 ? `  ${term.padEnd(termWidth)}  ` : ' '.repeat(indent)}${line}`.trimEnd(),
  );
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line || lines.length === 0) lines.push(line);
  return lines;
}
