// Page arithmetic of the paged lists (DECISIONS.md §1: `page` 1-indexed, `{ data, meta }`). Pure, so
// the edges (page 0, a page beyond the end, an empty list) are tested as a table in test/audit/paging.test.ts.

/** Seed "Limits": audit page_size default 20, max 100; the spec enforces the range, this the default. */
export const DEFAULT_PAGE_SIZE = 20;

export interface PageWindow {
  /** The page served: the one asked for, 0 read as 1 (seed "Audit and domains"). */
  page: number;
  pageSize: number;
  /** Rows to skip. Capped where it already lies beyond any table: no bigint overflow for a huge page. */
  offset: number;
}

export interface PaginationMeta {
  page: number;
  page_size: number;
  total_items: number;
  total_pages: number;
}

export function pageWindow(page: number | undefined, pageSize: number | undefined): PageWindow {
  const served = Math.max(1, Math.trunc(page ?? 1));
  const size = pageSize ?? DEFAULT_PAGE_SIZE;
  return { page: served, pageSize: size, offset: Math.min((served - 1) * size, Number.MAX_SAFE_INTEGER) };
}

export function pageMeta(window: PageWindow, totalItems: number): PaginationMeta {
  return {
    page: window.page,
    page_size: window.pageSize,
    total_items: totalItems,
    total_pages: Math.ceil(totalItems / window.pageSize),
  };
}
