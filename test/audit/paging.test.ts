// The page arithmetic of paged lists (DECISIONS.md §1; seed "Audit and domains": page 1-indexed, 0
// reads as 1; "Limits": page_size default 20).
import { describe, expect, it } from 'vitest';
import { pageMeta, pageWindow } from '../../server/src/features/audit/paging.js';

describe('pageWindow', () => {
  it.each([
    ['defaults', { page: undefined, size: undefined }, { page: 1, pageSize: 20, offset: 0 }],
    ['page 0 reads as 1', { page: 0, size: 10 }, { page: 1, pageSize: 10, offset: 0 }],
    ['page 1', { page: 1, size: 100 }, { page: 1, pageSize: 100, offset: 0 }],
    ['page 3 of 25', { page: 3, size: 25 }, { page: 3, pageSize: 25, offset: 50 }],
    [
      'a huge page is capped, not overflowed',
      { page: 1e20, size: 100 },
      { page: 1e20, pageSize: 100, offset: Number.MAX_SAFE_INTEGER },
    ],
  ] as const)('%s', (_name, given, want) => {
    expect(pageWindow(given.page, given.size)).toEqual(want);
  });
});

describe('pageMeta', () => {
  it.each([
    [
      'nothing at all',
      { page: 1, size: 20, total: 0 },
      { page: 1, page_size: 20, total_items: 0, total_pages: 0 },
    ],
    [
      'one short page',
      { page: 1, size: 20, total: 3 },
      { page: 1, page_size: 20, total_items: 3, total_pages: 1 },
    ],
    [
      'exactly full pages',
      { page: 2, size: 5, total: 10 },
      { page: 2, page_size: 5, total_items: 10, total_pages: 2 },
    ],
    [
      'a partial last page',
      { page: 3, size: 5, total: 11 },
      { page: 3, page_size: 5, total_items: 11, total_pages: 3 },
    ],
    [
      'a page beyond the end keeps its number and the total',
      { page: 9, size: 5, total: 11 },
      { page: 9, page_size: 5, total_items: 11, total_pages: 3 },
    ],
  ] as const)('%s', (_name, given, want) => {
    expect(pageMeta(pageWindow(given.page, given.size), given.total)).toEqual(want);
  });
});
