// --help everywhere: every generated command names its parameters, with descriptions and whether
// they are required. No server needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../../generated/operations.js';
import { operationOverrides } from '../../src/commands/operation-overrides.js';
import { EXIT_CODES, ExitCode } from '../../src/exit-codes.js';
import { flagInputs } from '../../src/operation-inputs.js';
import { argumentName, pathParameters, type CliOperation } from '../../src/operation.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/run-cli.js';

beforeAll(() => ensureBuilt(), 180_000);
afterAll(() => undefined);

const allOperations = Object.values(operations) as readonly CliOperation[];

describe('svcctl --help', () => {
  it('lists the command groups, the global options and the exit codes', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(ExitCode.ok);
    expect(r.stdout).toMatch(/^ {2}public <command> /m);
    expect(r.stdout).toMatch(/^ {2}api \[options\] <METHOD> <PATH> /m);
    expect(r.stdout).toMatch(/^ {2}config <command> /m);
    for (const flag of [
      '--base-url <url>',
      '--profile <name>',
      '-o, --output-format <format>',
      '--token <token>',
      '-q, --quiet',
    ]) {
      expect(r.stdout).toContain(flag);
    }
    for (const { code, meaning } of EXIT_CODES)
      expect(r.stdout).toContain(`  ${String(code).padEnd(3)}${meaning}`);
  });

  it('prints the version', async () => {
    const r = await runCli(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });

  it('answers `help WORDS...` like `WORDS... --help`', async () => {
    const a = await runCli(['help', 'public', 'captcha-config', 'get']);
    const b = await runCli(['public', 'captcha-config', 'get', '--help']);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
  });

  it("lists a group's commands with their arguments", async () => {
    const r = await runCli(['public', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}resellers <command> +by-host$/m);
    const get = await runCli(['public', 'captcha-config', '--help']);
    expect(get.stdout).toMatch(/^ {2}get <HOSTNAME> +Captcha configuration for a host$/m);
  });
});

describe('every generated command', () => {
  it.each(allOperations.map((op) => [op.cli.join(' '), op] as const))(
    '%s --help names its parameters',
    async (_words, op) => {
      const r = await runCli([...op.cli, '--help']);
      expect(r.code).toBe(ExitCode.ok);
      const positionals = pathParameters(op)
        .map((p) => ` <${argumentName(op, p)}>`)
        .join('');
      expect(r.stdout).toContain(`Usage: svcctl ${op.cli.join(' ')}`);
      // `power start|stop|restart` are one operation ("Start, stop or restart a service"); each says what it does.
      if (op.operationId !== 'serviceInstancePower') expect(r.stdout).toContain(op.summary);
      expect(r.stdout).toContain(`${op.method.toUpperCase()} /api/v2${op.path}`);
      // Commands that take their input their own way are checked below.
      if (Object.hasOwn(operationOverrides, op.operationId)) return;
      expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`${escape(positionals)}$`));
      const entries = helpEntries(r.stdout);
      for (const p of pathParameters(op)) {
        const entry = entries.find((e) => e.startsWith(`${argumentName(op, p)} `));
        expect(entry, `argument ${p.name}`).toContain(squash(p.description));
      }
      for (const input of flagInputs(op)) {
        const entry = entries.find((e) => e.startsWith(`${input.flag} `) || e === input.flag);
        expect(entry, `flag ${input.flag}`).toBeDefined();
        expect(entry).toContain(squash(input.description));
        if (input.required) expect(entry).toContain('(required');
        else expect(entry).not.toContain('(required');
      }
      if (op.body) expect(entries.some((e) => e.startsWith('--data <json> '))).toBe(true);
    },
  );
});

describe('the commands that take their input their own way', () => {
  it.each([
    ['me avatar set', 'Usage: svcctl me avatar set [options] <FILE>', ['FILE ']],
    [
      'discovery mark',
      'Usage: svcctl discovery mark [options] [KEY...]',
      ['KEY... ', '--keys <string[]> ', '--data <json> '],
    ],
    [
      'sudo setup',
      'Usage: svcctl sudo setup [options]',
      ['--pin <pin> ', '--pin-stdin ', '--non-interactive '],
    ],
    [
      'sudo elevate',
      'Usage: svcctl sudo elevate [options]',
      ['--pin <pin> ', '--pin-stdin ', '--non-interactive '],
    ],
    [
      'sudo totp enroll',
      'Usage: svcctl sudo totp enroll [options]',
      ['--code <code> ', '--non-interactive '],
    ],
    [
      'sudo totp verify',
      'Usage: svcctl sudo totp verify [options]',
      ['--code <code> ', '--non-interactive '],
    ],
    ['sudo exit', 'Usage: svcctl sudo exit [options]', []],
  ])('%s --help', async (words, usage, starts) => {
    const r = await runCli([...words.split(' '), '--help']);
    expect(r.code).toBe(ExitCode.ok);
    expect(r.stdout.split('\n')[0]).toBe(usage);
    const entries = helpEntries(r.stdout);
    for (const start of starts)
      expect(
        entries.some((e) => e.startsWith(start)),
        start,
      ).toBe(true);
    // No flag for the PIN's or code's body field beyond these, and never the token.
    expect(entries.some((e) => e.startsWith('--token <string>'))).toBe(false);
  });

  it('lists them by their arguments', async () => {
    expect((await runCli(['me', 'avatar', '--help'])).stdout).toMatch(/^ {2}set <FILE> +Upload my avatar$/m);
    expect((await runCli(['discovery', '--help'])).stdout).toMatch(
      /^ {2}mark \[options\] \[KEY\.\.\.\] +Mark/m,
    );
  });
});

describe('public client-errors create --help', () => {
  it('marks the required body fields and describes the optional ones', async () => {
    const r = await runCli(['public', 'client-errors', 'create', '--help']);
    expect(r.stdout).toMatch(/^ {2}--error-id <string> +\(required, here or in --data\)$/m);
    expect(r.stdout).toMatch(/^ {2}--message <string> +\(required, here or in --data\)$/m);
    expect(r.stdout).toMatch(/^ {2}--digest <string> +The front-end framework's build-time digest\.$/m);
    expect(r.stdout).toMatch(/^Body fields:$/m);
    expect(r.stdout).toMatch(/^Request options:$/m);
  });
});

/** The help's argument and option entries, each with its wrapped lines joined: `--flag <type> text`. */
function helpEntries(help: string): string[] {
  const entries: string[] = [];
  for (const line of help.split('\n')) {
    if (/^ {2}\S/.test(line)) entries.push(squash(line));
    else if (/^ {3,}\S/.test(line) && entries.length > 0) entries[entries.length - 1] += ` ${squash(line)}`;
  }
  return entries;
}

function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('a body field named like a global option', () => {
  it('belongs to the command; the global option stays available before the command words', async () => {
    const op = allOperations.find((o) => o.body?.fields.some((f) => f.name === 'token'));
    if (!op) return; // The index has no such operation (yet).
    const r = await runCli([...op.cli, '--help']);
    const entries = helpEntries(r.stdout);
    expect(entries.filter((e) => e.startsWith('--token '))).toHaveLength(1);
    expect(entries.find((e) => e.startsWith('--token '))).toMatch(/^--token <string>/);
    expect(r.stdout).not.toContain('--token <token>');
  });
});
