// The human format: lists as aligned columns, objects as aligned key/value lines. Nested values are
// shown as compact JSON; anyone who needs them whole uses -o json or -o yaml.

const MAX_CELL = 60;

export function renderTable(value: unknown): string {
  if (isListEnvelope(value)) {
    const body = renderTable(value.data);
    if (!isRecord(value.meta)) return body;
    const { page, total_pages, total_items } = value.meta;
    return `${body}\npage ${String(page ?? '?')} of ${String(total_pages ?? '?')}, ${String(total_items ?? '?')} items\n`;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)\n';
    if (value.every(isRecord)) return columns(value);
    return value.map((v) => cell(v, Infinity)).join('\n') + '\n';
  }
  if (isRecord(value)) return keyValues(value);
  return `${cell(value, Infinity)}\n`;
}

function columns(rows: Record<string, unknown>[]): string {
  const keys: string[] = [];
  for (const row of rows) for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
  const grid = [
    keys.map((k) => k.toUpperCase()),
    ...rows.map((row) => keys.map((k) => cell(row[k], MAX_CELL))),
  ];
  const widths = keys.map((_, i) => Math.max(...grid.map((line) => displayWidth(line[i]!))));
  return (
    grid
      .map((line) =>
        line
          .map((c, i) => pad(c, i === line.length - 1 ? 0 : widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
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

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The list envelopes of DECISIONS.md §1: `{ data: [...], meta: { page, ... } }` and `{ data: [...] }`. */
function isListEnvelope(v: unknown): v is { data: unknown[]; meta?: unknown } {
  return isRecord(v) && Array.isArray(v.data) && Object.keys(v).every((k) => k === 'data' || k === 'meta');
}
