// writeStream: the items of `--all` written as they arrive, in each format, the same text the whole
// list would give where the format allows; a failure part-way leaves the JSON array unclosed.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { writeStream, type StreamOptions } from '../src/output/stream.js';
import { renderTable } from '../src/output/table.js';

async function* from<T>(items: readonly T[], failAfter?: number): AsyncGenerator<T> {
  for (const [i, item] of items.entries()) {
    if (i === failAfter) throw new Error('page 2 failed');
    yield item;
  }
}

async function written(items: AsyncIterable<unknown>, options: Omit<StreamOptions, 'stdout'>) {
  const stdout = new PassThrough();
  const chunks: string[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  let error: unknown = null;
  let count: number | null = null;
  try {
    count = await writeStream(items, { ...options, stdout });
  } catch (e) {
    error = e;
  }
  return { text: chunks.join(''), chunks, count, error };
}

const ROWS = [
  { id: 'a', action: 'member.added', nested: { x: 1 } },
  { id: 'bb', action: 'project.created', nested: { x: [2, 3] } },
  { id: 'ccc', action: 'organization.updated.with.a.long.name', nested: null },
];

describe('writeStream', () => {
  it.each([[[]], [ROWS.slice(0, 1)], [ROWS]])(
    'json: the text JSON.stringify gives the whole list (%#)',
    async (rows) => {
      const { text, count } = await written(from(rows), { format: 'json' });
      expect(text).toBe(`${JSON.stringify(rows, null, 2)}\n`);
      expect(count).toBe(rows.length);
    },
  );

  it('json: an item at a time, and unclosed when the walk fails', async () => {
    const { chunks } = await written(from(ROWS), { format: 'json' });
    expect(chunks.length).toBeGreaterThanOrEqual(ROWS.length);
    const failed = await written(from(ROWS, 2), { format: 'json' });
    expect(failed.error).toEqual(new Error('page 2 failed'));
    expect(failed.text.startsWith('[\n')).toBe(true);
    expect(() => JSON.parse(failed.text) as unknown).toThrow();
  });

  const META = (count: number) => ({
    page: 1,
    page_size: count || 100,
    total_items: count,
    total_pages: count ? 1 : 0,
  });

  it.each([[[]], [ROWS.slice(0, 1)], [ROWS]])(
    'json with an envelope: the text JSON.stringify gives { data, meta } (%#)',
    async (rows) => {
      const { text, count } = await written(from(rows), { format: 'json', envelope: META });
      expect(text).toBe(`${JSON.stringify({ data: rows, meta: META(rows.length) }, null, 2)}\n`);
      expect(count).toBe(rows.length);
    },
  );

  it('json with an envelope: unclosed when the walk fails', async () => {
    const failed = await written(from(ROWS, 2), { format: 'json', envelope: META });
    expect(failed.error).toEqual(new Error('page 2 failed'));
    expect(failed.text.startsWith('{\n  "data": [\n')).toBe(true);
    expect(() => JSON.parse(failed.text) as unknown).toThrow();
  });

  it.each<[readonly unknown[]]>([
    [[]],
    [ROWS.slice(0, 1)],
    [ROWS],
    [[{ text: 'two\nlines\n', list: [1, [2]] }]],
  ])('yaml with an envelope: the document stringify gives { data, meta } (%#)', async (rows) => {
    const { text } = await written(from(rows), { format: 'yaml', envelope: META });
    expect(parseYaml(text)).toEqual({ data: rows, meta: META(rows.length) });
    const { stringify } = await import('yaml');
    expect(text).toBe(stringify({ data: rows, meta: META(rows.length) }));
  });

  it('yaml with an envelope: no meta when the walk fails', async () => {
    const failed = await written(from(ROWS, 2), { format: 'yaml', envelope: META });
    expect(parseYaml(failed.text)).toEqual({ data: ROWS.slice(0, 2) });
  });

  it('yaml: one sequence', async () => {
    expect(parseYaml((await written(from(ROWS), { format: 'yaml' })).text)).toEqual(ROWS);
    expect((await written(from([]), { format: 'yaml' })).text).toBe('[]\n');
  });

  it('table: the whole list as renderTable draws it when it fits the first batch', async () => {
    expect((await written(from(ROWS), { format: 'table' })).text).toBe(renderTable(ROWS));
    expect((await written(from([]), { format: 'table' })).text).toBe('(none)\n');
  });

  it('table: later rows keep the widths the first batch settled; a wider cell pushes its line along', async () => {
    const { text } = await written(from(ROWS), { format: 'table', batch: 2 });
    expect(text.split('\n')).toEqual([
      'ID  ACTION           NESTED',
      // Nested values as one-line summaries, never JSON (issue 34).
      'a   member.added     x=1',
      'bb  project.created  x=2, 3',
      'ccc  organization.updated.with.a.long.name  -',
      '',
    ]);
  });

  it('table: chosen columns', async () => {
    const columns = [
      { header: 'WHAT', value: (r: Record<string, unknown>) => r.action },
      { header: 'WHO', value: (r: Record<string, unknown>) => r.id },
    ];
    const { text } = await written(from(ROWS.slice(0, 2)), { format: 'table', columns });
    expect(text).toBe('WHAT             WHO\nmember.added     a\nproject.created  bb\n');
  });

  it('quiet: walks every item and prints nothing', async () => {
    const { text, count } = await written(from(ROWS), { format: 'json', quiet: true });
    expect(text).toBe('');
    expect(count).toBe(3);
  });

  it('waits for a slow reader instead of buffering the walk', async () => {
    const stdout = new PassThrough({ highWaterMark: 16 });
    let pulled = 0;
    async function* many() {
      for (let i = 0; i < 50; i += 1) {
        pulled += 1;
        yield { i, pad: 'x'.repeat(40) };
      }
    }
    const done = writeStream(many(), { format: 'json', stdout });
    await new Promise((r) => setTimeout(r, 20));
    expect(pulled).toBeLessThan(50);
    stdout.resume();
    expect(await done).toBe(50);
  });
});
