// Every message that tells the user to run an svcctl command names one that exists: the words after
// `svcctl` in a string of the server's or svcctl's source walk svcctl's command tree down to a command
// that runs (issue 34: an import refusal named `svcctl services power ... stop`, which is none).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CommandSpec } from '../src/argv/spec.js';
import { rootCommand } from '../src/main.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(dir, f));
}

export interface Hint {
  words: string[];
  /** `svcctl game --help`: a group may be named for its help. */
  help: boolean;
  /** Preceded by what introduces a command (`(`, `run `, `with `...), so not prose about svcctl. */
  introduced: boolean;
}

/** `svcctl word word` in the code (not in its comments): the command words, up to the first that is not one. */
export function hintsIn(text: string): Hint[] {
  const code = text.replace(/^\s*(\/\*|\*).*$/gm, '').replace(/(^|\s)\/\/.*$/gm, '');
  return [
    ...code.matchAll(/(\(|\b(?:run|use|with|see|try) )?(?:npx )?svcctl((?: [a-z][a-z-]*)+)( --help)?/g),
  ].map((m) => ({
    words: m[2]!.trim().split(' '),
    help: m[3] !== undefined,
    introduced: m[1] !== undefined,
  }));
}

/** Whether the hint leads from the root to a command that runs (words after it are its arguments). */
export function namesACommand(root: CommandSpec, hint: Hint): boolean {
  let at = root;
  for (const word of hint.words) {
    const next = at.subcommands().find((c) => c.name === word);
    if (!next) break;
    at = next;
  }
  return at !== root && (hint.help || at.runnable !== undefined);
}

/** A hint, not prose that mentions svcctl: introduced as one, or starting with a top-level command. */
const isHint = (root: CommandSpec, hint: Hint) =>
  hint.introduced || root.subcommands().some((c) => c.name === hint.words[0]);

describe('command hints', () => {
  const root = rootCommand();

  it('tells a hint that names no command from one that does', () => {
    const hint = (words: string[]) => ({ words, help: false, introduced: true });
    expect(namesACommand(root, hint(['services', 'power', 'abc', 'stop']))).toBe(false);
    expect(namesACommand(root, hint(['power', 'stop', 'abc']))).toBe(true);
    expect(namesACommand(root, hint(['game']))).toBe(false);
    expect(namesACommand(root, { ...hint(['game']), help: true })).toBe(true);
    expect(hintsIn('x = `run svcctl files put ${a}`; // svcctl nothing here').map((h) => h.words)).toEqual([
      ['files', 'put'],
    ]);
    expect(isHint(root, hintsIn("'svcctl says why'")[0]!)).toBe(false);
    expect(isHint(root, hintsIn("'(svcctl servcies list)'")[0]!)).toBe(true);
  });

  it("every hint in the server's and svcctl's messages names a command", () => {
    const wrong: string[] = [];
    let seen = 0;
    for (const file of [...sources('server/src'), ...sources('cli/src')]) {
      for (const hint of hintsIn(readFileSync(join(ROOT, file), 'utf8'))) {
        if (!isHint(root, hint)) continue;
        seen += 1;
        if (!namesACommand(root, hint)) wrong.push(`${file}: svcctl ${hint.words.join(' ')}`);
      }
    }
    expect(seen).toBeGreaterThan(5);
    expect(wrong).toEqual([]);
  });
});
