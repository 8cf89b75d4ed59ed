import { describe, expect, it } from 'vitest';
import { renderHelp } from '../../src/argv/help.js';
import type { CommandSpec, OptionSpec, Runnable } from '../../src/argv/spec.js';

const globals: OptionSpec[] = [
  { long: '--token', value: '<token>', key: 'token', group: 'Global options:', description: 'API token' },
  {
    long: '--output-format',
    short: '-o',
    value: '<format>',
    key: 'f',
    group: 'Global options:',
    description: 'format',
  },
];

const runnable: Runnable = {
  description: 'Verify a thing\n\nPOST /api/v2/things/{id}/verify',
  arguments: [{ name: 'id', required: true, description: 'The thing.' }],
  options: [
    {
      long: '--token',
      value: '<string>',
      key: 't',
      group: 'Body fields:',
      description: 'The mailed token. (required, here or in --data)',
    },
    { long: '--data', value: '<json>', key: 'data', group: 'Request options:', description: 'the body' },
  ],
  run: async () => undefined,
};

const verify: CommandSpec = {
  name: 'verify',
  summary: 'Verify a thing',
  term: 'verify [options] <id>',
  subcommands: () => [],
  runnable: () => runnable,
};
const things: CommandSpec = {
  name: 'things',
  summary: 'verify',
  term: 'things <command>',
  listGroup: 'API commands:',
  subcommands: () => [verify],
};
const root: CommandSpec = {
  name: 'svcctl',
  summary: '',
  term: 'svcctl',
  description: 'The CLI.',
  subcommands: () => [things],
};

describe('renderHelp', () => {
  it('lays out a runnable command: usage, description, arguments, its options, then the global ones it leaves free', () => {
    expect(
      renderHelp({ program: 'svcctl', path: [root, things, verify], runnable, globals, width: 80 }),
    ).toBe(
      [
        'Usage: svcctl things verify [options] <id>',
        '',
        'Verify a thing',
        '',
        'POST /api/v2/things/{id}/verify',
        '',
        'Arguments:',
        '  id                            The thing.',
        '',
        'Body fields:',
        '  --token <string>              The mailed token. (required, here or in --data)',
        '',
        'Request options:',
        '  --data <json>                 the body',
        '',
        'Global options:',
        '  -o, --output-format <format>  format',
        '  -h, --help                    show help for the command',
        '',
      ].join('\n'),
    );
  });

  it("lists a group's commands, and at the root the version, help command and epilog", () => {
    const text = renderHelp({
      program: 'svcctl',
      path: [root],
      runnable: undefined,
      globals,
      epilog: 'Exit codes: ...',
      width: 80,
    });
    expect(text).toContain('Usage: svcctl [global options] <command> [arguments] [options]\n\nThe CLI.\n');
    expect(text).toMatch(/^API commands:\n {2}things <command> +verify$/m);
    expect(text).toMatch(/^ {2}-V, --version +print the version$/m);
    expect(text).toMatch(/^ {2}help \[command\.\.\.\] +show help for a command$/m);
    expect(text.trimEnd().endsWith('Exit codes: ...')).toBe(true);
    expect(
      renderHelp({ program: 'svcctl', path: [root, things], runnable: undefined, globals, width: 80 }),
    ).toMatch(/^Usage: svcctl things \[options\] <command>$/m);
  });

  it('wraps descriptions under their column', () => {
    const long: Runnable = {
      ...runnable,
      options: [{ long: '--x', key: 'x', group: 'Body fields:', description: 'word '.repeat(30).trim() }],
    };
    const lines = renderHelp({
      program: 'svcctl',
      path: [root, things, verify],
      runnable: long,
      globals: [],
      width: 60,
    }).split('\n');
    const start = lines.findIndex((l) => l.startsWith('  --x'));
    expect(lines[start]!.length).toBeLessThanOrEqual(60);
    const column = lines[start]!.indexOf('word');
    expect(lines[start + 1]!.indexOf('word')).toBe(column);
    expect(lines[start + 1]!.slice(0, column).trim()).toBe('');
  });
});
