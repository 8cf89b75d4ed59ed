// How a waiting command (`--wait`, `operations wait`) shows an operation's progress on stderr: on a
// terminal one bar redrawn in place, so a long reinstall does not scroll the screen away; through a
// pipe or into a log one plain line per change (`phase stop 10%`), which a script can grep and a
// log keeps readable, with no carriage returns or escape sequences in it.
import type { components } from '@svcplatform/sdk';

type Operation = components['schemas']['Operation'];

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

const BAR_WIDTH = 24;
// Erase the line, then draw from its start (ECMA-48 EL, "erase in line", whole line).
const REDRAW = '\r\x1b[2K';

/** One plain line: `queued`, `phase stop 10%`, `running`, `succeeded`, `failed`, `cancelled`. */
export function plainLine(op: Operation): string {
  if (op.status !== 'running') return op.status;
  const percent = op.progress_percent === null ? '' : ` ${op.progress_percent}%`;
  return op.phase === null ? `running${percent}` : `phase ${op.phase}${percent}`;
}

/** `[##########..............]  42%  install`: the bar, the percent, then the phase or status. */
export function barLine(op: Operation): string {
  const percent = op.progress_percent ?? (op.status === 'succeeded' ? 100 : null);
  const filled = percent === null ? 0 : Math.round((Math.min(100, Math.max(0, percent)) / 100) * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
  const label = op.status === 'running' ? (op.phase ?? 'running') : op.status;
  return `${bar} ${percent === null ? '   -' : `${String(percent).padStart(3)}%`}  ${label}`;
}

export interface ProgressReporter {
  /** The operation as last seen; drawn only when what is shown would change. */
  update(op: Operation): void;
  /** Ends the display (the bar's line is finished with a newline). */
  finish(): void;
}

export function progressReporter(stream: ProgressStream): ProgressReporter {
  const terminal = stream.isTTY === true;
  let last = '';
  let drawn = false;
  return {
    update(op) {
      const text = terminal ? fit(barLine(op), stream.columns) : plainLine(op);
      if (text === last) return;
      last = text;
      if (terminal) {
        stream.write(`${REDRAW}${text}`);
        drawn = true;
      } else stream.write(`${text}\n`);
    },
    finish() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

/** A line longer than the terminal wraps, and `\r` would then redraw only its last row. */
function fit(text: string, columns: number | undefined): string {
  if (!columns || columns < 2 || text.length < columns) return text;
  return text.slice(0, columns - 1);
}
