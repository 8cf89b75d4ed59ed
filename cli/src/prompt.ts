// What a person types: lines read from stdin, whether it is a terminal or a pipe, and secrets read
// on a terminal with echo off. One reader per run owns stdin, so `--password-stdin` and the prompts
// that follow share it without losing a line to another reader's buffer.
//
// A secret is read in raw mode, switched on before its prompt is written: whatever is typed once the
// prompt shows is never echoed. Raw mode also delivers Ctrl-C as a byte; it restores the terminal and
// then interrupts the process as the terminal would have.
import { CliError } from './errors.js';

const INTERRUPTED = Symbol('interrupted');

export interface PromptInput extends NodeJS.EventEmitter {
  readonly isTTY?: boolean;
  setEncoding(encoding: BufferEncoding): unknown;
  setRawMode?(mode: boolean): unknown;
  pause(): unknown;
  resume(): unknown;
}

export interface PromptOutput {
  write(text: string): unknown;
}

export class Prompter {
  private buffer = '';
  private ended = false;
  private listening = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly input: PromptInput = process.stdin,
    private readonly output: PromptOutput = process.stderr,
    /** What Ctrl-C does while a secret is read; the default interrupts the process. */
    private readonly interrupt: () => void = () => process.kill(process.pid, 'SIGINT'),
  ) {}

  /** A terminal: prompts are answered by a person, and secrets can be hidden. */
  get isTerminal(): boolean {
    return this.input.isTTY === true && typeof this.input.setRawMode === 'function';
  }

  /** Writes the question and reads the answer as typed. Null when the input has ended. */
  async ask(question: string): Promise<string | null> {
    this.output.write(question);
    return this.readLine();
  }

  /** Like `ask`, for a secret: on a terminal what is typed is not shown; from a pipe it is the next line. */
  async askHidden(question: string): Promise<string | null> {
    if (!this.isTerminal) {
      this.output.write(question);
      return this.readLine();
    }
    this.input.setRawMode!(true);
    let answer: string | null | typeof INTERRUPTED;
    try {
      this.output.write(question);
      answer = await this.readRawLine();
    } finally {
      this.input.setRawMode!(false);
      this.output.write('\n');
    }
    if (answer === INTERRUPTED) {
      this.interrupt();
      throw new CliError('interrupted');
    }
    return answer;
  }

  /** The next line of input, without its line ending; null at the end of input. */
  async readLine(): Promise<string | null> {
    for (;;) {
      const end = this.buffer.indexOf('\n');
      if (end !== -1) {
        const line = this.buffer.slice(0, end).replace(/\r$/, '');
        this.buffer = this.buffer.slice(end + 1);
        return line;
      }
      if (this.ended) {
        if (this.buffer === '') return null;
        const last = this.buffer.replace(/\r$/, '');
        this.buffer = '';
        return last;
      }
      await this.more();
    }
  }

  /** Stops reading stdin, so that it no longer keeps the process alive. */
  close(): void {
    if (!this.listening) return;
    this.listening = false;
    this.input.removeListener('data', this.onData);
    this.input.removeListener('end', this.onEnd);
    this.input.removeListener('error', this.onEnd);
    this.input.pause();
  }

  /** Keystrokes in raw mode, up to Enter: Backspace, Ctrl-U and Ctrl-D work; escapes are dropped. */
  private async readRawLine(): Promise<string | null | typeof INTERRUPTED> {
    let secret = '';
    for (;;) {
      const chars = [...this.buffer];
      for (let i = 0; i < chars.length; i += 1) {
        const ch = chars[i]!;
        if (ch === '\r' || ch === '\n') {
          if (ch === '\r' && chars[i + 1] === '\n') i += 1;
          this.buffer = chars.slice(i + 1).join('');
          return secret;
        }
        if (ch === '\u0003') {
          this.buffer = '';
          return INTERRUPTED;
        }
        if (ch === '\u0004') {
          if (secret !== '') continue;
          this.buffer = chars.slice(i + 1).join('');
          return null;
        }
        if (ch === '\u007f' || ch === '\b') secret = [...secret].slice(0, -1).join('');
        else if (ch === '\u0015') secret = '';
        else if (ch === '\u001b') i = skipEscape(chars, i);
        else if (ch >= ' ') secret += ch;
      }
      this.buffer = '';
      if (this.ended) return secret === '' ? null : secret;
      await this.more();
    }
  }

  private more(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.listen();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.input.resume();
    });
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.input.setEncoding('utf8');
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onEnd);
  }

  private readonly onData = (chunk: string | Buffer): void => {
    this.buffer += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    // Read no further than asked: a pipe's rest stays unread, and a terminal stays quiet.
    this.input.pause();
    this.wakeUp();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.wakeUp();
  };

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** The index of the last character of the escape sequence starting at `start` (arrow keys and the like). */
function skipEscape(chars: readonly string[], start: number): number {
  const next = chars[start + 1];
  if (next !== '[' && next !== 'O') return next === undefined ? start : start + 1;
  let i = start + 2;
  // CSI: parameter and intermediate bytes, then one final byte in @..~.
  while (i < chars.length && !/[@-~]/.test(chars[i]!)) i += 1;
  return Math.min(i, chars.length - 1);
}
