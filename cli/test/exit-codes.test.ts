import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES, ExitCode, exitCodeForStatus } from '../src/exit-codes.js';

describe('exitCodeForStatus', () => {
  it.each([
    [400, ExitCode.invalid],
    [401, ExitCode.auth],
    [403, ExitCode.auth],
    [404, ExitCode.notFound],
    [405, ExitCode.invalid],
    [409, ExitCode.conflict],
    [410, ExitCode.notFound],
    [422, ExitCode.conflict],
    [429, ExitCode.rateLimited],
    [500, ExitCode.server],
    [501, ExitCode.server],
    [503, ExitCode.server],
    [302, ExitCode.failure],
  ])('HTTP %i → %i', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });
});

describe('the documentation', () => {
  it('lists every exit code once, in order', () => {
    expect(EXIT_CODES.map((e) => e.code)).toEqual(Object.values(ExitCode));
  });

  it('matches cli/README.md', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = readme.split('\n').map((line) => line.split('|').map((cell) => cell.trim()));
    for (const { code, meaning } of EXIT_CODES) expect(rows).toContainEqual(['', String(code), meaning, '']);
  });
});
