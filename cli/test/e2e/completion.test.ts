// `svcctl completion bash|zsh|fish`: the scripts the built svcctl prints, run by the real shells. bash is
// driven as readline drives it (COMP_WORDS and COMP_CWORD, then the function `complete` registered);
// fish through its own `complete -C`; zsh with compadd, compset and _files standing in for the
// completion system, which only runs inside a terminal's line editor. Every visible command of the tree
// the program builds is checked to complete, so a command added later is covered without a list.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { walkCommands } from '../../src/completion/table.js';
import { ExitCode } from '../../src/exit-codes.js';
import { rootCommand } from '../../src/main.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir } from '../support/run-cli.js';

const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  ensureBuilt();
  const dir = tempDir('svcctl-completion-');
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    expect(r.code, r.stderr).toBe(0);
    scripts[shell] = join(dir, `svcctl.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
}, 180_000);

/** Runs each case (the words, the cursor's last) through bash's completion function; one bash in all. */
function bashComplete(cases: readonly (readonly string[])[]): string[][] {
  const quote = (w: string) => `'${w.replace(/'/g, "'\\''")}'`;
  const program = [
    `source ${quote(scripts.bash!)}`,
    // What readline does: the words of the line, the cursor's index, then the registered function.
    'fn=$(complete -p svcctl | sed -E "s/.*-F ([^ ]+).*/\\1/")',
    // `npx svcctl` is completed by the same function.
    '[[ $(complete -p npx) == *"-F $fn "* ]] || echo "npx is not completed" >&2',
    ...cases.map(
      (words) =>
        `COMP_WORDS=(${words.map(quote).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); "$fn"; printf '%s\\n' "\${COMPREPLY[@]}" "<end>"`,
    ),
  ].join('\n');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  const answers = r.stdout.split('<end>\n').slice(0, -1);
  expect(answers).toHaveLength(cases.length);
  return answers.map((a) => a.split('\n').filter(Boolean));
}

describe('bash', () => {
  it.each([
    ['a command word', ['svcctl', 'or'], ['orgs']],
    ["a group's words", ['svcctl', 'operations', ''], ['list', 'show', 'wait']],
    ['the output formats after -o', ['svcctl', '-o', ''], ['table', 'json', 'yaml']],
    ['after --output-format= (readline splits at =)', ['svcctl', '--output-format', '=', 'y'], ['yaml']],
    [
      'the values of an enum field',
      ['svcctl', 'members', 'update', 'ORG', 'USER', '--role', ''],
      ['owner', 'admin', 'billing', 'member'],
    ],
    ["a command's flags", ['svcctl', 'members', 'add', 'ORG', '--r'], ['--role']],
    ['global flags everywhere', ['svcctl', 'orgs', 'list', '--out'], ['--output-format']],
    [
      'after a global flag and its value',
      ['svcctl', '--profile', 'bob', 'sudo', 'disable', '--method', 'p'],
      ['pin'],
    ],
    ['grouped short flags ending in -o', ['svcctl', '-qo', 'j'], ['json']],
    ['a positional with known values', ['svcctl', 'config', 'set', ''], ['base-url', 'output']],
    ['help then command words', ['svcctl', 'help', 'complet'], ['completion']],
    ['the shells', ['svcctl', 'completion', ''], ['bash', 'zsh', 'fish']],
    ['nothing after --, so files', ['svcctl', 'api', '--', '-'], []],
    ['nothing for a file argument, so files', ['svcctl', 'me', 'avatar', 'set', ''], []],
    ['npx svcctl, as the README types it', ['npx', 'svcctl', 'or'], ['orgs']],
    ["npx svcctl's flag values", ['npx', 'svcctl', '-o', ''], ['table', 'json', 'yaml']],
    ['npx running something else: nothing of ours', ['npx', 'prettier', 'or'], []],
  ])('%s', (_name, words, want) => {
    expect(bashComplete([words])[0]).toEqual(want);
  });

  it('completes every visible command of the tree, hidden ones never', async () => {
    const visible: string[][] = [];
    const hidden: string[][] = [];
    for await (const c of walkCommands(rootCommand())) {
      if (c.words.length > 0) (c.hidden ? hidden : visible).push([...c.words]);
    }
    expect(visible.length).toBeGreaterThan(150);
    expect(hidden.map((w) => w.join(' '))).toContain('oauth callback');
    const cases = [...visible, ...hidden].map((w) => ['svcctl', ...w.slice(0, -1), w.at(-1)!]);
    const answers = bashComplete(cases);
    for (const [i, words] of visible.entries()) expect(answers[i], words.join(' ')).toContain(words.at(-1));
    for (const [i, words] of hidden.entries()) {
      expect(answers[visible.length + i], words.join(' ')).not.toContain(words.at(-1));
    }
  });
});

describe.skipIf(!has('fish'))('fish', () => {
  const fish = (line: string) => {
    const r = spawnSync('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C '${line}'`], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter(Boolean);
  };

  it('completes words with their summaries, flag values, and --flag=value', () => {
    expect(fish('svcctl or')).toEqual([expect.stringMatching(/^orgs\tlist, create, /)]);
    expect(fish('svcctl operations ').map((l) => l.split('\t')[0])).toEqual(['list', 'show', 'wait']);
    expect(fish('svcctl -o ')).toEqual(['json', 'table', 'yaml']);
    expect(fish('svcctl --output-format=ya')).toEqual(['--output-format=yaml']);
    expect(fish('svcctl members add ORG --ro').map((l) => l.split('\t')[0])).toEqual(['--role']);
    expect(fish('npx svcctl operations ').map((l) => l.split('\t')[0])).toEqual(['list', 'show', 'wait']);
  });

  it('falls back to file names where it knows nothing', () => {
    expect(fish(`svcctl me avatar set ${scripts.fish!.slice(0, -2)}`)).toContain(scripts.fish);
  });
});

describe.skipIf(!has('zsh'))('zsh', () => {
  it('hands compadd the words with descriptions, and _files where it knows nothing', () => {
    const program = `
      compdef() { :; }
      _files() { print -r -- "(files)" }
      compset() { print -r -- "(compset $*)" }
      compadd() { print -r -- "$*"; print -rl -- "\${cands[@]}" "\${descs[@]}" }
      source ${scripts.zsh}
      t() { words=("$@"); CURRENT=$#; _svcctl; print -r -- "<end>" }
      t svcctl or
      t svcctl --output-format=ya
      t svcctl me avatar set ""
      t npx svcctl or
    `;
    const r = spawnSync('zsh', ['-f', '-c', program], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.split('<end>\n').slice(0, 4)).toEqual([
      expect.stringMatching(/^-l -d descs -a cands\norgs\norgs {2}-- list, create, [^\n]+\n$/),
      '(compset -P *=)\n-l -d descs -a cands\nyaml\nyaml\n',
      '(files)\n',
      expect.stringMatching(/^-l -d descs -a cands\norgs\norgs {2}-- list, create, [^\n]+\n$/),
    ]);
  });
});

describe('svcctl completion', () => {
  it('refuses another shell (exit 2) and explains itself', async () => {
    const r = await runCli(['completion', 'tcsh']);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain('SHELL must be one of bash, zsh, fish; got "tcsh"');
    const help = await runCli(['completion', '--help']);
    expect(help.stdout).toMatch(/^Usage: svcctl completion \[options\] <SHELL>$/m);
    expect(help.stdout).toContain('source <(svcctl completion bash)');
  });
});
