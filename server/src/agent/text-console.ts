// The text console a local machine shows on its built-in screen (text-screen.ts) when the host has no
// Xvnc: a grid of characters with what the machine prints (its name and image), then a login prompt that
// takes the keyboard. The local substrate's machines have no operating system behind that prompt, so a
// line typed at it is answered with one saying so; what matters is that keys reach the console and the
// console shows them, as a real machine's would.

/** The X keysyms the console acts on (printable Latin-1 keysyms are their own character codes). */
const KEYSYM = { backSpace: 0xff08, return: 0xff0d, keypadEnter: 0xff8d } as const;
export const LOGIN_PROMPT = 'login: ';

/** Rows that changed since the listeners were last told. */
export type ChangeListener = (rows: number[]) => void;

export class TextConsole {
  #lines: string[] = [];
  #input = '';
  #listeners = new Set<ChangeListener>();

  constructor(
    text: string,
    readonly columns: number,
    readonly rows: number,
    readonly answer: (line: string) => string,
  ) {
    for (const line of text.split('\n')) this.#print(line);
    this.#print('');
  }

  /** The character at a cell (a space past a line's end), and whether the cursor is on it. */
  cell(column: number, row: number): { code: number; cursor: boolean } {
    const line = this.#screenLines()[row] ?? '';
    const cursor = row === this.#promptRow() && column === LOGIN_PROMPT.length + this.#input.length;
    return { code: column < line.length ? line.charCodeAt(column) : 0x20, cursor };
  }

  /** A key pressed on the screen: a printable character is typed, Return sends the line. */
  key(keysym: number): void {
    const before = this.#screenLines();
    if (keysym >= 0x20 && keysym <= 0x7e) {
      if (LOGIN_PROMPT.length + this.#input.length + 1 < this.columns)
        this.#input += String.fromCharCode(keysym);
    } else if (keysym === KEYSYM.backSpace) {
      this.#input = this.#input.slice(0, -1);
    } else if (keysym === KEYSYM.return || keysym === KEYSYM.keypadEnter) {
      const typed = this.#input;
      this.#print(`${LOGIN_PROMPT}${typed}`);
      this.#input = '';
      if (typed.trim()) this.#print(this.answer(typed));
    } else {
      return;
    }
    const after = this.#screenLines();
    const changed: number[] = [];
    for (let row = 0; row < this.rows; row += 1) if (before[row] !== after[row]) changed.push(row);
    // The cursor moves along the prompt's row even when only it changed.
    if (!changed.includes(this.#promptRow())) changed.push(this.#promptRow());
    for (const listener of this.#listeners) listener(changed);
  }

  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Printed lines are cut to the width; the oldest scroll off the top (one row stays for the prompt). */
  #print(text: string): void {
    for (let at = 0; at === 0 || at < text.length; at += this.columns) {
      this.#lines.push(text.slice(at, at + this.columns));
    }
    if (this.#lines.length > this.rows - 1) this.#lines.splice(0, this.#lines.length - (this.rows - 1));
  }

  #promptRow(): number {
    return this.#lines.length;
  }

  #screenLines(): string[] {
    return [...this.#lines, `${LOGIN_PROMPT}${this.#input}`];
  }
}
