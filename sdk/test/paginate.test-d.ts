// Compile-time guarantees of client.paginate: items typed from the operation's page, only paged
// operations accepted, `page` left to the paginator, the same on the session client.
import { describe, expectTypeOf, test } from 'vitest';
import {
  createClient,
  createSessionClient,
  type components,
  type OperationId,
  type PageItem,
  type PagedOperationId,
} from '../src/index.js';

type Schemas = components['schemas'];
const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
const session = createSessionClient({ baseUrl: 'http://127.0.0.1:1' });
const id = '00000000-0000-4000-8000-000000000000';

describe('paginate', () => {
  test('yields the entries of the page type', async () => {
    for await (const e of client.paginate('organizationAuditList', { path: { id } })) {
      expectTypeOf(e).toEqualTypeOf<Schemas['AuditEntry']>();
    }
    for await (const e of session.paginate('organizationAuditList', {
      path: { id },
      query: { action: 'member.added' },
    })) {
      expectTypeOf(e).toEqualTypeOf<Schemas['AuditEntry']>();
    }
    expectTypeOf<PageItem<'organizationAuditList'>>().toEqualTypeOf<Schemas['AuditEntry']>();
  });

  test('only operations answering { data, meta } with a page parameter are paged', () => {
    expectTypeOf<'organizationAuditList'>().toExtend<PagedOperationId>();
    // `{ data }` without meta (GET /me/sessions) and plain arrays do not page.
    expectTypeOf<Extract<PagedOperationId, 'meSessionsList' | 'organizationList' | 'meGet'>>().toBeNever();
    expectTypeOf<PagedOperationId>().toExtend<OperationId>();
    // @ts-expect-error GET /me answers one object, not pages
    void client.paginate('meGet');
    // @ts-expect-error GET /me/sessions answers { data } without pages
    void client.paginate('meSessionsList');
    // @ts-expect-error an unknown operation
    void client.paginate('auditEverything');
  });

  test('params are exact: the path is required, page is the paginator’s, page_size and filters pass', () => {
    // @ts-expect-error the organization id is required
    void client.paginate('organizationAuditList');
    // @ts-expect-error the organization id is required
    void client.paginate('organizationAuditList', { path: {} });
    // @ts-expect-error page is driven by the paginator
    void client.paginate('organizationAuditList', { path: { id }, query: { page: 2 } });
    // @ts-expect-error an unknown filter
    void client.paginate('organizationAuditList', { path: { id }, query: { actor: 'x' } });
    void client.paginate(
      'organizationAuditList',
      { path: { id }, query: { page_size: 50, project_id: id } },
      { signal: AbortSignal.timeout(1000) },
    );
  });

  test('a runtime id goes through the loose overload', () => {
    const runtimeId: string = 'organizationAuditList';
    expectTypeOf(client.paginate(runtimeId, { path: { id } })).toEqualTypeOf<
      AsyncGenerator<unknown, void, undefined>
    >();
  });
});
