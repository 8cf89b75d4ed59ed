import { describe, expect, it } from 'vitest';
import { CommandLineError, parseCommandLine, type ParseResult } from '../../src/argv/parse.js';
import type { CommandSpec, OptionSpec, Runnable } from '../../src/argv/spec.js';

const globals: OptionSpec[] = [
  { long: '--profile', value: '<name>', key: 'profile', group: 'G', description: '' },
  { long: '--token', value: '<token>', key: 'token', group: 'G', description: '' },
  {
    long: '--output-format',
    short: '-o',
    value: '<format>',
    key: 'format',
    group: 'G',
    description: '',
    choices: ['json', 'yaml'],
  },
  { long: '--quiet', short: '-q', key: 'quiet', group: 'G', description: '' },
];

const verify: Runnable = {
  description: '',
  arguments: [
    { name: 'id', required: true, description: '' },
    { name: 'extra', required: false, description: '' },
  ],
  options: [
    // A body field that shadows the global --token after the command words.
    { long: '--token', value: '<string>', key: 'field', group: 'B', description: '' },
    {
      long: '--port',
      value: '<integer>',
      key: 'port',
      group: 'B',
      description: '',
      parse: (raw) => {
        if (!/^\d+$/.test(raw)) throw new Error('expected an integer');
        return Number(raw);
      },
    },
    {
      long: '--tag',
      value: '<string[]>',
      key: 'tag',
      group: 'B',
      description: '',
      parse: (raw, prev) => [...((prev as string[]) ?? []), raw],
    },
    { long: '--force', key: 'force', group: 'B', description: '' },
    { long: '--no-force', key: 'force', group: 'B', description: '', flagValue: false },
    { long: '--page', value: '<integer>', key: 'page', group: 'Q', description: '', mandatory: true },
  ],
  run: async () => undefined,
};

const leaf = (name: string, runnable: Runnable, children: CommandSpec[] = []): CommandSpec => ({
  name,
  summary: name,
  term: name,
  subcommands: () => children,
  runnable: () => runnable,
});
const group = (name: string, children: CommandSpec[]): CommandSpec => ({
  name,
  summary: name,
  term: name,
  subcommands: () => children,
});

const root = group('svcctl', [
  group('things', [
    leaf('verify', verify),
    group('nested', [leaf('deep', { ...verify, arguments: [], options: [] })]),
  ]),
  leaf('mark', {
    ...verify,
    arguments: [{ name: 'key', required: false, description: '', variadic: true }],
    options: [],
  }),
  leaf('login', { ...verify, arguments: [], options: [] }, [
    leaf('confirm', {
      ...verify,
      arguments: [{ name: 'code', required: true, description: '' }],
      options: [],
    }),
  ]),
]);

const parse = (argv: string[]) => parseCommandLine(root, globals, argv);
const run = async (argv: string[]) => {
  const r = await parse(argv);
  if (r.kind !== 'run') throw new Error(`expected a run, got ${r.kind}`);
  return { words: r.path.slice(1).map((c) => c.name), args: r.args, options: r.options, globals: r.globals };
};
const base = ['things', 'verify', 'ID', '--page', '1'];

describe('parseCommandLine', () => {
  it.each([
    [
      'words, a positional and an option',
      {
        given: base,
        want: { words: ['things', 'verify'], args: ['ID'], options: { page: '1' }, globals: {} },
      },
    ],
    ['--x=value', { given: [...base, '--port=8080'], want: { options: { page: '1', port: 8080 } } }],
    [
      'global options before, between and after the words',
      {
        given: ['--profile', 'p', 'things', '-q', 'verify', 'ID', '--page', '1', '-o', 'yaml'],
        want: { globals: { profile: 'p', quiet: true, format: 'yaml' } },
      },
    ],
    [
      'grouped short flags with a value',
      { given: [...base, '-qo', 'json'], want: { globals: { quiet: true, format: 'json' } } },
    ],
    [
      'a short flag with its value attached',
      { given: [...base, '-ojson'], want: { globals: { format: 'json' } } },
    ],
    [
      "the command's own --token shadows the global one after the words",
      {
        given: ['--token', 'api', ...base, '--token', 'body'],
        want: { options: { page: '1', field: 'body' }, globals: { token: 'api' } },
      },
    ],
    [
      '--flag and --no-flag',
      { given: [...base, '--force', '--no-force'], want: { options: { page: '1', force: false } } },
    ],
    [
      'a repeated option accumulates',
      { given: [...base, '--tag', 'a', '--tag', 'b'], want: { options: { page: '1', tag: ['a', 'b'] } } },
    ],
    [
      '-- ends the options',
      {
        given: ['things', 'verify', '--page', '1', '--', '--not-an-option'],
        want: { args: ['--not-an-option'] },
      },
    ],
    [
      'a negative number is an argument',
      { given: ['things', 'verify', '-5', '--page', '1'], want: { args: ['-5'] } },
    ],
    [
      'an option value may start with a dash',
      { given: [...base, '--profile', '-x'], want: { globals: { profile: '-x' } } },
    ],
    ['an optional argument', { given: [...base, 'more'], want: { args: ['ID', 'more'] } }],
    [
      'a command that runs and has subcommands takes a subcommand',
      { given: ['login', 'confirm', '123456'], want: { words: ['login', 'confirm'], args: ['123456'] } },
    ],
    [
      'a command that runs and has subcommands runs itself',
      { given: ['login'], want: { words: ['login'], args: [] } },
    ],
  ])('%s', async (_name, { given, want }) => {
    expect(await run(given)).toMatchObject(want);
  });

  it.each([
    [
      'an unknown option, with a suggestion',
      [...base, '--prot', '1'],
      "unknown option '--prot'\n(Did you mean --port?)",
    ],
    [
      'an unknown command, with a suggestion',
      ['things', 'verfiy'],
      "unknown command 'verfiy'\n(Did you mean verify?)",
    ],
    ['an unknown command, far from any', ['zzz'], "unknown command 'zzz'"],
    ['a missing argument', ['things', 'verify', '--page', '1'], "missing required argument 'id'"],
    [
      'too many arguments',
      [...base, 'a', 'b'],
      "too many arguments for 'things verify': expected 2 arguments, got 3",
    ],
    ['a missing value', [...base, '--port'], "option '--port <integer>' argument missing"],
    [
      'a value the option refuses',
      [...base, '--port', 'x'],
      "option '--port <integer>' argument 'x' is invalid: expected an integer",
    ],
    [
      'a value outside the choices',
      [...base, '-o', 'xml'],
      "option '-o, --output-format <format>' argument 'xml' is invalid. Allowed choices are json, yaml.",
    ],
    ['a value for a flag', [...base, '--force=yes'], "option '--force' does not take a value"],
    [
      'a missing mandatory option',
      ['things', 'verify', 'ID'],
      "required option '--page <integer>' not specified",
    ],
    ['an option of the command before its words', ['--port', '1', ...base], "unknown option '--port'"],
  ])('refuses %s', async (_name, argv, message) => {
    const err = await parse(argv).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandLineError);
    expect((err as Error).message).toBe(message);
  });

  it('gives a variadic last argument every remaining operand, or none', async () => {
    expect((await run(['mark', 'a', '-q', 'b', 'c'])).args).toEqual(['a', 'b', 'c']);
    expect((await run(['mark'])).args).toEqual([]);
  });

  it('names the command an error concerns', async () => {
    const err = (await parse(['things', 'verify', '--bogus']).catch((e: unknown) => e)) as CommandLineError;
    expect(err.words).toEqual(['things', 'verify']);
  });

  it.each([
    ['--help after the words', ['things', 'verify', '--help'], ['things', 'verify'], false],
    ['-h before the words', ['-h', 'things'], ['things'], false],
    ['--help wins over errors', ['things', 'verify', '--bogus', '-h'], ['things', 'verify'], false],
    ['--help after an unknown command shows the group', ['things', 'nope', '--help'], ['things'], false],
    ['a group without its command', ['things'], ['things'], true],
    ['nothing at all', [], [], true],
  ])('answers help for %s', async (_name, argv, words, implicit) => {
    const r = (await parse(argv)) as Extract<ParseResult, { kind: 'help' }>;
    expect(r.kind).toBe('help');
    expect(r.path.slice(1).map((c) => c.name)).toEqual(words);
    expect(r.implicit).toBe(implicit);
  });

  it('answers --version at the root only', async () => {
    expect(await parse(['--version'])).toEqual({ kind: 'version' });
    expect(await parse(['-V'])).toEqual({ kind: 'version' });
    await expect(parse([...base, '--version'])).rejects.toThrow("unknown option '--version'");
  });
});
