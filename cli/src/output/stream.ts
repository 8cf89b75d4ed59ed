// Writes the items of a stream (`--all`: every page of a paged list) as they arrive, in the chosen
// format, so a long walk shows its first rows at once and never holds the whole list:
//
//   json   with `envelope`, the object `{ "data": [...], "meta": {...} }` a paged list answers, its
//          items written one by one: the same text `JSON.stringify({ data, meta }, null, 2)` gives for
//          the whole; without, one JSON array. On a failure part-way the text is left unclosed, so no
//          JSON parser takes a partial list for the whole one.
//   yaml   the same shape as YAML, an item at a time (`data:` then `  - ...`); a walk that fails
//          part-way leaves out `meta`.
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
  /**
   * json and yaml: the items go under `data`, followed by `meta` made from how many were written (a
   * paged list's `--all` keeps the shape of one page: DECISIONS.md §1).
   */
  envelope?: (count: number) => unknown;
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
      return options.envelope ? streamJsonEnvelope(items, out, options.envelope) : streamJson(items, out);
    case 'yaml':
      return streamYaml(items, out, options.envelope);
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

/** `{ "data": [ items ], "meta": meta }`, indented as JSON.stringify indents it. */
async function streamJsonEnvelope(
  items: AsyncIterable<unknown>,
  out: Out,
  envelope: (count: number) => unknown,
): Promise<number> {
  let n = 0;
  for await (const item of items) {
    const text = JSON.stringify(item, null, 2).replace(/\n/g, '\n    ');
    await out(`${n === 0 ? '{\n  "data": [\n' : ',\n'}    ${text}`);
    n += 1;
  }
  const meta = JSON.stringify(envelope(n), null, 2).replace(/\n/g, '\n  ');
  await out(`${n === 0 ? '{\n  "data": [],\n' : '\n  ],\n'}  "meta": ${meta}\n}\n`);
  return n;
}

async function streamYaml(
  items: AsyncIterable<unknown>,
  out: Out,
  envelope?: (count: number) => unknown,
): Promise<number> {
  const { stringify } = await import('yaml');
  // Under `data:` every line of an item moves two places right, as the whole document would put it.
  const indent = envelope ? (text: string) => text.replace(/^(?=.)/gm, '  ') : (text: string) => text;
  let n = 0;
  for await (const item of items) {
    await out(`${n === 0 && envelope ? 'data:\n' : ''}${indent(stringify([item]))}`);
    n += 1;
  }
  if (!envelope) {
    if (n === 0) await out('[]\n');
    return n;
  }
  await out(`${n === 0 ? 'data: []\n' : ''}${stringify({ meta: envelope(n) })}`);
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
