// Running iptables and iptables-restore for the edge's kernel rules (egress.ts, forward-kernel.ts): with
// the platform's PATH and the C locale, so their messages read the same everywhere, and `-w` left to the
// caller (it waits for the xtables lock other programs on the host may hold).
import { spawn } from 'node:child_process';
import { searchPath } from '../substrate/local/programs.js';

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(file: string, args: string[], input?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: searchPath(), LANG: 'C' },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    // A program that exits before reading says so by its status, not by a broken pipe.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

export async function must(file: string, args: string[], input?: string): Promise<string> {
  const result = await run(file, args, input);
  if (result.code !== 0)
    throw new Error(`${file} ${args.slice(0, 3).join(' ')} failed: ${result.stderr.trim().split('\n')[0]}`);
  return result.stdout;
}

/** A rule as `iptables -S` prints it, split into arguments (a quoted comment stays one). */
export function splitRule(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}
