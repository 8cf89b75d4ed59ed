import { describe, expect, it } from 'vitest';
import { renderTable } from '../src/output/table.js';

describe('renderTable', () => {
  it.each([
    [
      'a list of objects as aligned columns, in first-seen key order',
      {
        given: [
          { id: 'a1', title: 'Disk' },
          { id: 'b22', title: 'Net', extra: true },
        ],
        want: 'ID   TITLE  EXTRA\na1   Disk   -\nb22  Net    true\n',
      },
    ],
    [
      'an object as key/value lines',
      {
        given: { enabled: false, site_key: null, protected_actions: ['login'] },
        want: 'enabled:            false\nsite_key:           -\nprotected_actions:  login\n',
      },
    ],
    [
      'a paged list with its footer',
      {
        given: { data: [{ id: 1 }], meta: { page: 1, page_size: 20, total_items: 1, total_pages: 1 } },
        want: 'ID\n1\n\npage 1 of 1, 1 items\n',
      },
    ],
    ['a { data } list without meta', { given: { data: [{ id: 1 }] }, want: 'ID\n1\n' }],
    ['an empty list', { given: [], want: '(none)\n' }],
    ['a list of scalars, one per line', { given: ['a', 2], want: 'a\n2\n' }],
    ['a scalar', { given: 'hello', want: 'hello\n' }],
    ['newlines in a cell folded', { given: [{ m: 'one\n  two' }], want: 'M\none two\n' }],
    ['an empty object', { given: {}, want: '(empty)\n' }],
    [
      "an answer holding a listing: its other fields, then the listing's entries as rows",
      {
        given: { path: '/srv', entries: [{ name: 'a', size: 1 }], truncated: false },
        want: 'path:       /srv\ntruncated:  false\n\nNAME  SIZE\na     1\n',
      },
    ],
    [
      'the filled list of objects is the listing; other nested values as counts and summaries',
      {
        given: {
          rules: [{ id: 'r1', ports: [25565, 25566], source: { cidr: '0.0.0.0/0', note: null } }],
          ips: [],
          enforcement: { active: true, by: { kind: 'nft' } },
        },
        want:
          'ips:          -\nenforcement:  active=true by=(kind=nft)\n\n' +
          'ID  PORTS         SOURCE\nr1  25565, 25566  cidr=0.0.0.0/0 note=-\n',
      },
    ],
    ['an empty listing, the only list', { given: { rules: [], max: 10 }, want: 'max:  10\n\n(none)\n' }],
    [
      'lists of objects in cells counted, never JSON',
      { given: [{ id: 1, tags: [{ a: 1 }, { a: 2 }] }], want: 'ID  TAGS\n1   2 items\n' },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(renderTable(given)).toBe(want);
  });

  it('shows only the columns chosen, also inside a paged list', () => {
    const columns = [
      { header: 'WHO', value: (r: Record<string, unknown>) => (r.actor as { id: string }).id },
      { header: 'WHAT', value: (r: Record<string, unknown>) => r.action },
    ];
    const rows = [{ id: 'e1', action: 'a.b', actor: { id: 'u1' }, noise: 'x' }];
    expect(renderTable(rows, columns)).toBe('WHO  WHAT\nu1   a.b\n');
    const page = { data: rows, meta: { page: 1, page_size: 20, total_items: 1, total_pages: 1 } };
    expect(renderTable(page, columns)).toBe('WHO  WHAT\nu1   a.b\n\npage 1 of 1, 1 items\n');
    // An object is not a list: every field, as key/value lines.
    expect(renderTable(rows[0], columns)).toMatch(/^noise: +x$/m);
  });

  it('cuts long cells in columns but not in key/value lines', () => {
    const long = 'x'.repeat(100);
    expect(renderTable([{ v: long }]).split('\n')[1]).toBe(`${'x'.repeat(59)}…`);
    expect(renderTable({ v: long })).toBe(`v:  ${long}\n`);
  });

  it('aligns by characters, not bytes', () => {
    expect(
      renderTable([
        { a: 'ü', b: 1 },
        { a: 'xx', b: 2 },
      ]),
    ).toBe('A   B\nü   1\nxx  2\n');
  });
});
