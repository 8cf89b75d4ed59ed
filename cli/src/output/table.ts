// The human format: lists as aligned columns, objects as aligned key/value lines. Nested values are
// shown as compact JSON; anyone who needs them whole uses -o json or -o yaml.

const MAX_CELL = 60;

/** A column chosen for a list (output/columns.ts): its heading and how a row gives its cell. */
export interface Column {
  readonly header: string;
  value(row: Record<string, unknown>): unknown;
}

/** `columns`, when given, choose what a list of objects shows; without them every key is a column. */
export function renderTable(value: unknown, columns?: readonly Column[]): string {
  if (isListEnvelope(value)) {
    const body = renderTable(value.data, columns);
    if (!isRecord(value.meta)) return body;
    const { page, total_pages, total_items } = value.meta;
    return `${body}\npage ${String(page ?? '?')} of ${String(total_pages ?? '?')}, ${String(total_items ?? '?')} items\n`;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)\n';
    if (value.every(isRecord)) {
      const grid = gridOf(value, columns);
      const widths = widthsOf(grid);
      return grid.map((line) => formatLine(line, widths)).join('');
    }
    return value.map((v) => cell(v, Infinity)).join('\n') + '\n';
  }
  if (isRecord(value)) return keyValues(value);
  return `${cell(value, Infinity)}\n`;
}

/** Every key of the rows, in first-seen order, as a column. */
export function keyColumns(rows: readonly Record<string, unknown>[]): Column[] {
  const keys: string[] = [];
  for (const row of rows) for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
  return keys.map((k) => ({ header: k.toUpperCase(), value: (row) => row[k] }));
}

/** The heading line and one line of cells per row. */
export function gridOf(rows: readonly Record<string, unknown>[], columns?: readonly Column[]): string[][] {
  const cols = columns ?? keyColumns(rows);
  return [cols.map((c) => c.header), ...rows.map((row) => cellsOf(row, cols))];
}

export function cellsOf(row: Record<string, unknown>, columns: readonly Column[]): string[] {
  return columns.map((c) => cell(c.value(row), MAX_CELL));
}

export function widthsOf(grid: readonly string[][]): number[] {
  return (grid[0] ?? []).map((_, i) => Math.max(...grid.map((line) => displayWidth(line[i] ?? ''))));
}

/** One line, each cell padded to its column's width (a wider cell pushes the rest along). */
export function formatLine(line: readonly string[], widths: readonly number[]): string {
  return (
    line
      .map((c, i) => pad(c, i === line.length - 1 ? 0 : widths[i]!))
      .join('  ')
      .trimEnd() + '\n'
  );
}

function keyValues(obj: Record<string, unknown>): string {
  const keys = Object.keys(obj);
  if (keys.length === 0) return '(empty)\n';
  const width = Math.max(...keys.map((k) => k.length)) + 1;
  return keys.map((k) => `${pad(`${k}:`, width)}  ${cell(obj[k], Infinity)}`.trimEnd()).join('\n') + '\n';
}

function cell(v: unknown, max: number): string {
  let s: string;
  if (v === null || v === undefined) s = '-';
  else if (typeof v === 'string') s = v.replace(/\s*\n\s*/g, ' ');
  else if (typeof v === 'number' || typeof v === 'boolean') s = String(v);
  else s = JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function pad(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - displayWidth(s)));
}

/** Code points, so an accented or astral character counts once. */
function displayWidth(s: string): number {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The list envelopes of DECISIONS.md §1: `{ data: [...], meta: { page, ... } }` and `{ data: [...] }`. */
function isListEnvelope(v: unknown): v is { data: unknown[]; meta?: unknown } {
  return isRecord(v) && Array.isArray(v.data) && Object.keys(v).every((k) => k === 'data' || k === 'meta');
}
