// The human format: lists as aligned columns, objects as aligned key/value lines. An object holding a
// listing (`files ls`'s entries, `ports list`'s allocations, `firewall list`'s rules) shows its other
// fields as key/value lines and the listing's entries as the table's rows. Any other nested value is a
// count or a one-line summary, never JSON: anyone who needs it whole uses -o json or -o yaml.

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
  if (isRecord(value)) {
    const listing = listingOf(value);
    if (listing === undefined) return keyValues(value);
    const { [listing]: rows, ...rest } = value;
    const head = Object.keys(rest).length > 0 ? `${keyValues(rest)}\n` : '';
    return `${head}${renderTable(rows, columns)}`;
  }
  return `${cell(value, Infinity)}\n`;
}

/**
 * The field of an answer that is its listing: its one list of objects (an empty list counts when it
 * is the only list; a non-empty one wins over empty ones). None when that is not clear.
 */
function listingOf(obj: Record<string, unknown>): string | undefined {
  const lists = Object.keys(obj).filter((k) => Array.isArray(obj[k]));
  const ofRecords = lists.filter((k) => (obj[k] as unknown[]).every(isRecord));
  const filled = ofRecords.filter((k) => (obj[k] as unknown[]).length > 0);
  if (filled.length === 1) return filled[0];
  if (filled.length === 0 && lists.length === 1 && ofRecords.length === 1) return lists[0];
  return undefined;
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
  else s = summary(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * A nested value in one line: a list of scalars joined, a list of objects counted, an object's scalar
 * fields as `key=value` (its own nested values counted in turn).
 */
function summary(v: unknown): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return '-';
    if (v.every((x) => !isRecord(x) && !Array.isArray(x))) return v.map((x) => cell(x, Infinity)).join(', ');
    return `${v.length} ${v.length === 1 ? 'item' : 'items'}`;
  }
  if (isRecord(v)) {
    const parts = Object.entries(v).map(([k, x]) =>
      isRecord(x) ? `${k}=(${summary(x)})` : `${k}=${cell(x, Infinity)}`,
    );
    return parts.length > 0 ? parts.join(' ') : '-';
  }
  return String(v);
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
