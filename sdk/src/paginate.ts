// `client.paginate(operationId, params)`: every item of every page of a paged operation, one page
// fetched at a time and only when the consumer asks for the item after the last one it holds. A paged
// operation answers `{ data: T[], meta: { page, page_size, total_items, total_pages } }` (DECISIONS.md §1)
// and takes the query parameters `page` (1-indexed) and `page_size`. Nothing here names an operation:
// which ones are paged is read from their types and, at run time, from the operation index.
import type { components, operations as ApiOperations } from './generated/api.js';
import { operations, type OperationId, type OperationIndexEntry } from './generated/operations.js';
import type {
  LooseParams,
  OperationParams,
  OperationResult,
  RequestOptions,
  RequiredKeys,
  Simplify,
} from './operation-types.js';

type PaginationMeta = components['schemas']['PaginationMeta'];

type QueryOf<K extends OperationId> = ApiOperations[K]['parameters']['query'];

/** The operations whose answer is one page of a list: they take `page` and answer `{ data, meta }`. */
export type PagedOperationId = {
  [K in OperationId]: OperationResult<K> extends { data: readonly unknown[]; meta: PaginationMeta }
    ? 'page' extends keyof NonNullable<QueryOf<K>>
      ? K
      : never
    : never;
}[OperationId];

/** What `paginate` yields for a paged operation: one entry of its `data`. */
export type PageItem<K extends PagedOperationId> =
  OperationResult<K> extends { data: readonly (infer Item)[] } ? Item : never;

/** The operation's params without `page`, which the paginator drives. */
export type PaginateParams<K extends PagedOperationId> = Simplify<
  Omit<OperationParams<K>, 'query'> &
    ([RequiredKeys<Omit<NonNullable<QueryOf<K>>, 'page'>>] extends [never]
      ? { query?: Omit<NonNullable<QueryOf<K>>, 'page'> }
      : { query: Omit<NonNullable<QueryOf<K>>, 'page'> })
>;

/** `options.signal` ends the iteration (with its reason) at the next item or during a fetch. */
export type PaginateArgs<K extends PagedOperationId> = [RequiredKeys<PaginateParams<K>>] extends [never]
  ? [params?: PaginateParams<K>, options?: RequestOptions]
  : [params: PaginateParams<K>, options?: RequestOptions];

/** How one page is fetched: the client's own call, with its auth, retries and session refresh. */
export type PageRequest = (
  operationId: string,
  params: LooseParams,
  options: RequestOptions | undefined,
) => Promise<unknown>;

function pagedEntry(operationId: string): OperationIndexEntry {
  const index: Record<string, OperationIndexEntry> = operations;
  const op = Object.hasOwn(index, operationId) ? index[operationId]! : null;
  if (!op) throw new TypeError(`Unknown operation ${JSON.stringify(operationId)}`);
  const query = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
  if (op.method !== 'get' || !query.has('page') || op.responseType !== 'application/json') {
    throw new TypeError(
      `${operationId} is not a paged list (GET with a page parameter answering { data, meta })`,
    );
  }
  return op;
}

/** The default page_size: the most the operation allows, so a walk takes as few requests as it can. */
export function maxPageSize(op: OperationIndexEntry): number | undefined {
  const param = op.parameters.find((p) => p.in === 'query' && p.name === 'page_size') as
    { maximum?: unknown } | undefined;
  if (!param) return undefined;
  // The index carries the parameter's bounds; without a maximum the server's default applies.
  return typeof param.maximum === 'number' ? param.maximum : undefined;
}

function isPage(value: unknown): value is { data: unknown[]; meta: PaginationMeta } {
  if (typeof value !== 'object' || value === null) return false;
  const { data, meta } = value as { data?: unknown; meta?: { total_pages?: unknown } };
  return Array.isArray(data) && typeof meta?.total_pages === 'number';
}

/** The id of a list item, when it has one, to recognise an item that slid onto the next page. */
function idOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
}

/**
 * Walks the pages of `operationId` from page 1 until `meta.total_pages` (as the latest page reports
 * it), yielding every item. Offset paging: an item written meanwhile at the front pushes the others
 * back, so the first items of a page may be the last ones of the page before; those (compared by
 * `id`) are not yielded twice.
 */
export async function* paginate(
  request: PageRequest,
  operationId: string,
  params: LooseParams = {},
  options: RequestOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  const op = pagedEntry(operationId);
  if (params.query && Object.hasOwn(params.query, 'page')) {
    throw new TypeError('paginate drives `page` itself; leave it out of params.query');
  }
  const signal = options.signal;
  const size = params.query?.page_size ?? maxPageSize(op);
  let previous = new Set<unknown>();
  for (let page = 1; ; page += 1) {
    signal?.throwIfAborted();
    const query = { ...params.query, page, ...(size === undefined ? {} : { page_size: size }) };
    const answer = await request(operationId, { ...params, query }, options);
    if (!isPage(answer)) throw new TypeError(`${operationId} answered something other than { data, meta }`);
    const seen = new Set<unknown>();
    for (const item of answer.data) {
      const id = idOf(item);
      if (id !== undefined) {
        seen.add(id);
        if (previous.has(id)) continue;
      }
      signal?.throwIfAborted();
      yield item;
    }
    previous = seen;
    // An empty page ends the walk too, so a server whose total is off cannot keep it going forever.
    if (page >= answer.meta.total_pages || answer.data.length === 0) return;
  }
}
