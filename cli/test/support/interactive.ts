// Runs the built svcctl as a person would: on a terminal (under script(1), which gives it a
// pseudo-terminal for stdin, stdout and stderr) or with pipes, answering its prompts as they appear.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI_BIN } from './build.js';

export const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface Conversation {
  /** Everything shown so far: the terminal's output, or stdout and stderr interleaved for pipes. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves once `text` shows after what earlier waits consumed; rejects after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Types `text` (on a terminal, as keystrokes). */
  type(text: string): void;
  /** Closes stdin. */
  end(): void;
  /** The exit code, once the process has ended (stdin is closed then). */
  exit: Promise<number | null>;
}

export interface ConversationOptions {
  env: Record<string, string>;
  /** A pseudo-terminal (script) instead of pipes. */
  terminal: boolean;
}

export function converse(args: readonly string[], options: ConversationOptions): Conversation {
  const env = { PATH: process.env.PATH ?? '', TERM: 'dumb', ...options.env };
  let child: ChildProcessWithoutNullStreams;
  if (options.terminal) {
    const command = [process.execPath, CLI_BIN, ...args]
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: 'pipe' });
  } else {
    child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: 'pipe' });
  }
  let all = '';
  let out = '';
  let err = '';
  let consumed = 0;
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((l) => l());
  child.stdout.on('data', (c: Buffer) => {
    all += c.toString('utf8');
    out += c.toString('utf8');
    changed();
  });
  child.stderr.on('data', (c: Buffer) => {
    all += c.toString('utf8');
    err += c.toString('utf8');
    changed();
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      changed();
      resolve(code);
    });
  });
  let closed = false;
  void exit.finally(() => {
    closed = true;
    changed();
    if (!child.stdin.destroyed) child.stdin.end();
  });
  const normalize = (s: string) => s.replace(/\r\n/g, '\n');
  return {
    output: () => normalize(all),
    stdout: () => normalize(out),
    stderr: () => normalize(err),
    waitFor(text, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const at = all.indexOf(text, consumed);
          if (at !== -1) {
            consumed = at + text.length;
            done();
            resolve();
          } else if (closed) {
            done();
            reject(new Error(`svcctl ended without showing ${JSON.stringify(text)}; it showed:\n${all}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${JSON.stringify(text)}; svcctl showed:\n${all}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    type(text) {
      child.stdin.write(text);
    },
    end() {
      child.stdin.end();
    },
    exit,
  };
}
