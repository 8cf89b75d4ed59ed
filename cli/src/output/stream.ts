// Writes the items of a stream (`--all`: every page of a paged list) as they arrive, in the chosen
// format, so a long walk shows its first rows at once and never holds the whole list:
//
//   json   one JSON array, written item by item: the same text `JSON.stringify(list, null, 2)` gives
//          for the whole list. On a failure part-way the array is left unclosed, so no JSON parser
//          takes a partial list for the whole one.
//   yaml   one YAML sequence, an item at a time (`- ...`).
//   table  column widths are settled by the first `batch` rows (the first page), which are printed
//          together; later rows are printed as they come, padded to those widths.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { OutputFormat } from '../global-options.js';
import { cellsOf, formatLine, gridOf, isRecord, keyColumns, widthsOf, type Column } from './table.js';

export interface StreamOptions {
  format: OutputFormat;
  quiet?: boolean;
  columns?: readonly Column[] | undefined;
  /** Rows that settle the table's widths. Default 100, the largest page. */
  batch?: number;
  stdout?: Writable;
}

/** Resolves to the number of items written (read, when quiet). */
export async function writeStream(items: AsyncIterable<unknown>, options: StreamOptions): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const out = async (text: string) => {
    // Backpressure: a slow reader (a pager) holds the walk instead of filling memory.
    if (!options.quiet && !stdout.write(text)) await once(stdout, 'drain');
  };
  switch (options.format) {
    case 'json':
      return streamJson(items, out);
    case 'yaml':
      return streamYaml(items, out);
    case 'table':
      return streamTable(items, out, options.columns, options.batch ?? 100);
  }
}

type Out = (text: string) => Promise<void>;

async function streamJson(items: AsyncIterable<unknown>, out: Out): Promise<number> {
  let n = 0;
  for await (const item of items) {
    const text = JSON.stringify(item, null, 2).replace(/\n/g, '\n  ');
    await out(`${n === 0 ? '[\n' : ',\n'}  ${text}`);
    n += 1;
  }
  await out(n === 0 ? '[]\n' : '\n]\n');
  return n;
}

async function streamYaml(items: AsyncIterable<unknown>, out: Out): Promise<number> {
  const { stringify } = await import('yaml');
  let n = 0;
  for await (const item of items) {
    await out(stringify([item]));
    n += 1;
  }
  if (n === 0) await out('[]\n');
  return n;
}

async function streamTable(
  items: AsyncIterable<unknown>,
  out: Out,
  columns: readonly Column[] | undefined,
  batch: number,
): Promise<number> {
  const first: Record<string, unknown>[] = [];
  const layout: { columns: readonly Column[]; widths: number[] | null } = {
    columns: columns ?? [],
    widths: null,
  };
  const settle = async () => {
    const grid = gridOf(first, columns);
    layout.columns = columns ?? keyColumns(first);
    layout.widths = widthsOf(grid);
    await out(grid.map((line) => formatLine(line, layout.widths!)).join(''));
  };
  let n = 0;
  for await (const item of items) {
    n += 1;
    const row = isRecord(item) ? item : { value: item };
    if (layout.widths === null) {
      first.push(row);
      if (first.length >= batch) await settle();
    } else {
      await out(formatLine(cellsOf(row, layout.columns), layout.widths));
    }
  }
  if (n === 0) await out('(none)\n');
  else if (layout.widths === null) await settle();
  return n;
}
