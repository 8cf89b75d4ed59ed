import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { Prompter } from '../src/prompt.js';

/** A stdin double: a terminal (with raw mode recorded) or a pipe. */
function input(terminal: boolean) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (on: boolean) => void };
  const modes: boolean[] = [];
  if (terminal) {
    stream.isTTY = true;
    stream.setRawMode = (on) => void modes.push(on);
  }
  return { stream, modes };
}

function output() {
  let text = '';
  return { stream: { write: (s: string) => void (text += s) }, text: () => text };
}

describe('Prompter from a pipe', () => {
  it('reads one line per answer, prompts on its output, and null at the end', async () => {
    const { stream } = input(false);
    const out = output();
    const p = new Prompter(stream, out.stream);
    stream.end('me@example.test\r\nsecret\nlast without newline');
    expect(p.isTerminal).toBe(false);
    expect(await p.ask('Email: ')).toBe('me@example.test');
    expect(await p.askHidden('Password: ')).toBe('secret');
    expect(await p.readLine()).toBe('last without newline');
    expect(await p.readLine()).toBeNull();
    expect(out.text()).toBe('Email: Password: ');
    p.close();
  });

  it('waits for lines that arrive later, in pieces', async () => {
    const { stream } = input(false);
    const p = new Prompter(stream, output().stream);
    const answer = p.readLine();
    stream.write('par');
    setTimeout(() => stream.write('t one\npart two\n'), 10);
    expect(await answer).toBe('part one');
    expect(await p.readLine()).toBe('part two');
    p.close();
  });
});

describe('Prompter on a terminal', () => {
  it('reads a secret in raw mode, switched on before the prompt and off after', async () => {
    const { stream, modes } = input(true);
    const out = output();
    const writes: string[] = [];
    const p = new Prompter(stream, {
      write: (s: string) => {
        writes.push(`${modes.at(-1) ? 'raw' : 'cooked'}:${s}`);
        out.stream.write(s);
      },
    });
    const secret = p.askHidden('Password: ');
    stream.write('hunter2\r');
    expect(await secret).toBe('hunter2');
    expect(modes).toEqual([true, false]);
    expect(writes).toEqual(['raw:Password: ', 'cooked:\n']);
    expect(out.text()).not.toContain('hunter2');
    p.close();
  });

  it('edits like a terminal: Backspace, Ctrl-U; drops escape sequences and control characters', async () => {
    const { stream } = input(true);
    const p = new Prompter(stream, output().stream);
    const secret = p.askHidden('');
    stream.write('wrong\u0015pass\u007f\u007fsß\u001b[D\u001bOA\u0007wört\n');
    expect(await secret).toBe('pasßwört');
    p.close();
  });

  it('keeps what was typed after Enter for the next answer', async () => {
    const { stream } = input(true);
    const p = new Prompter(stream, output().stream);
    const secret = p.askHidden('Password: ');
    stream.write('s3cret\r\n123456\n');
    expect(await secret).toBe('s3cret');
    expect(await p.readLine()).toBe('123456');
    p.close();
  });

  it('answers null for Ctrl-D on an empty line', async () => {
    const { stream, modes } = input(true);
    const p = new Prompter(stream, output().stream);
    const secret = p.askHidden('Password: ');
    stream.write('\u0004');
    expect(await secret).toBeNull();
    expect(modes).toEqual([true, false]);
    p.close();
  });

  it('restores the terminal and interrupts on Ctrl-C', async () => {
    const { stream, modes } = input(true);
    const interrupt = vi.fn(() => {
      // The terminal is back to normal before the process is interrupted.
      expect(modes.at(-1)).toBe(false);
    });
    const p = new Prompter(stream, output().stream, interrupt);
    const secret = p.askHidden('Password: ');
    stream.write('abc\u0003');
    await expect(secret).rejects.toThrow('interrupted');
    expect(interrupt).toHaveBeenCalledOnce();
    p.close();
  });
});
