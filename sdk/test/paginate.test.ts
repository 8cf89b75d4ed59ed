// client.paginate against a scripted server: lazy (a page is fetched only when its first item is
// asked for), stops at meta.total_pages, passes page_size (default: the operation's maximum), honours
// an AbortSignal, skips an item that slid onto the next page, refreshes a session mid-walk, and
// refuses what does not page. The real server's side is in test/audit/paginate.test.ts.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, createSessionClient, isSvcApiError, operations } from '../src/index.js';
import { maxPageSize } from '../src/paginate.js';
import {
  json,
  problem,
  startScriptedServer,
  type ScriptedServer,
  type SeenRequest,
} from './support/scripted-server.js';

const ORG = '0b9f0000-0000-4000-8000-000000000001';

let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const entry = (n: number) => ({ id: `e-${String(n).padStart(4, '0')}`, action: 'member.added', n });

/** GET /organizations/{id}/audit over `total` entries, answered from the query as the real server would. */
function pages(total: number | (() => number), opts: { shiftAfterFirst?: number } = {}) {
  return (_n: number, req: SeenRequest, res: Parameters<Parameters<typeof startScriptedServer>[0]>[2]) => {
    const url = new URL(req.url, 'http://x');
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const size = Number(url.searchParams.get('page_size') ?? 20);
    const count = typeof total === 'number' ? total : total();
    // Entries written meanwhile at the front push the others back by `shift`.
    const shift = page > 1 ? (opts.shiftAfterFirst ?? 0) : 0;
    const all = Array.from({ length: count + shift }, (_, i) => entry(count + shift - i));
    json(res, 200, {
      data: all.slice((page - 1) * size, page * size),
      meta: { page, page_size: size, total_items: all.length, total_pages: Math.ceil(all.length / size) },
    });
  };
}

const queryOf = (r: SeenRequest) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);

describe('paginate', () => {
  test('yields every item of every page, in order, one request per page', async () => {
    server = await startScriptedServer(pages(7));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const seen: number[] = [];
    for await (const e of client.paginate('organizationAuditList', {
      path: { id: ORG },
      query: { page_size: 3 },
    })) {
      seen.push((e as unknown as { n: number }).n);
    }
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(server.requests.map(queryOf)).toEqual([
      { page: '1', page_size: '3' },
      { page: '2', page_size: '3' },
      { page: '3', page_size: '3' },
    ]);
    expect(new URL(server.requests[0]!.url, 'http://x').pathname).toBe(`/api/v2/organizations/${ORG}/audit`);
  });

  test('is lazy: nothing is fetched before the first item is asked for, the next page only after the last item', async () => {
    server = await startScriptedServer(pages(5));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const it = client.paginate('organizationAuditList', { path: { id: ORG }, query: { page_size: 2 } });
    await new Promise((r) => setTimeout(r, 20));
    expect(server.requests).toHaveLength(0);
    await it.next();
    expect(server.requests).toHaveLength(1);
    await it.next();
    expect(server.requests).toHaveLength(1);
    await it.next();
    expect(server.requests).toHaveLength(2);
    // Leaving early (a break in for await) fetches nothing more.
    await it.return();
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(server.requests).toHaveLength(2);
  });

  test('asks for the largest page the operation allows unless page_size is given, and passes the filters', async () => {
    server = await startScriptedServer(pages(3));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const all = [];
    for await (const e of client.paginate('organizationAuditList', {
      path: { id: ORG },
      query: { action: 'member.added', project_id: ORG },
    }))
      all.push(e);
    expect(all).toHaveLength(3);
    expect(server.requests.map(queryOf)).toEqual([
      { action: 'member.added', project_id: ORG, page: '1', page_size: '100' },
    ]);
  });

  test.each([
    ['an empty list', 0, 1],
    ['exactly one full page', 4, 1],
    ['exactly two full pages', 8, 2],
    ['a partial last page', 9, 3],
  ])('stops at meta.total_pages: %s', async (_name, total, requests) => {
    server = await startScriptedServer(pages(total));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    let count = 0;
    for await (const _ of client.paginate('organizationAuditList', {
      path: { id: ORG },
      query: { page_size: 4 },
    }))
      count += 1;
    expect(count).toBe(total);
    expect(server.requests).toHaveLength(requests);
  });

  test('follows the total as the latest page reports it, and stops at an empty page whatever it says', async () => {
    let total = 4;
    server = await startScriptedServer(pages(() => total));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const it = client.paginate('organizationAuditList', { path: { id: ORG }, query: { page_size: 2 } });
    await it.next();
    total = 2; // entries went away: page 2 is now beyond the end
    const rest = [];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
    expect(rest).toHaveLength(1);
    expect(server.requests).toHaveLength(2);

    await server.close();
    // A server claiming more pages than it has items: the empty page ends the walk.
    server = await startScriptedServer((_n, _req, res) =>
      json(res, 200, { data: [], meta: { page: 1, page_size: 2, total_items: 9, total_pages: 5 } }),
    );
    const liar = createClient({ baseUrl: server.baseUrl, retries: 0 });
    for await (const _ of liar.paginate('organizationAuditList', { path: { id: ORG } }))
      throw new Error('no items');
    expect(server.requests).toHaveLength(1);
  });

  test('an item pushed onto the next page by newer entries is not yielded twice', async () => {
    server = await startScriptedServer(pages(6, { shiftAfterFirst: 1 }));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const ids: string[] = [];
    for await (const e of client.paginate('organizationAuditList', {
      path: { id: ORG },
      query: { page_size: 3 },
    }))
      ids.push(e.id);
    expect(ids).toEqual(['e-0006', 'e-0005', 'e-0004', 'e-0003', 'e-0002', 'e-0001']);
  });

  test('an AbortSignal ends the walk with its reason, between items and during a fetch', async () => {
    server = await startScriptedServer(pages(10));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const between = new AbortController();
    const it = client.paginate(
      'organizationAuditList',
      { path: { id: ORG }, query: { page_size: 5 } },
      { signal: between.signal },
    );
    await it.next();
    between.abort(new Error('enough'));
    await expect(it.next()).rejects.toThrow('enough');
    expect(server.requests).toHaveLength(1);

    await server.close();
    server = await startScriptedServer(() => undefined); // never answers
    const hanging = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const during = new AbortController();
    const walk = hanging
      .paginate('organizationAuditList', { path: { id: ORG } }, { signal: during.signal })
      .next();
    await new Promise((r) => setTimeout(r, 30));
    during.abort(new Error('stop waiting'));
    await expect(walk).rejects.toThrow('stop waiting');

    const before = AbortSignal.abort(new Error('already'));
    await expect(
      hanging.paginate('organizationAuditList', { path: { id: ORG } }, { signal: before }).next(),
    ).rejects.toThrow('already');
  });

  test('a refused page is thrown as the SvcApiError of that call', async () => {
    server = await startScriptedServer((n, req, res) =>
      n === 1 ? pages(5)(n, req, res) : problem(res, 403, 'forbidden'),
    );
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const got: unknown[] = [];
    let failure: unknown;
    try {
      for await (const e of client.paginate('organizationAuditList', {
        path: { id: ORG },
        query: { page_size: 2 },
      }))
        got.push(e);
    } catch (e) {
      failure = e;
    }
    expect(got).toHaveLength(2);
    expect(isSvcApiError(failure, 'forbidden')).toBe(true);
  });

  test('the session client refreshes mid-walk and goes on with the new token', async () => {
    const auths: (string | undefined)[] = [];
    server = await startScriptedServer((n, req, res) => {
      if (req.url.endsWith('/auth/refresh')) {
        json(res, 200, { token: 'fresh', refresh_token: 'svc_rt_2', session_id: 's-1' });
        return;
      }
      auths.push(req.headers.authorization);
      if (req.headers.authorization === 'Bearer stale' && queryOf(req).page === '2') {
        problem(res, 401, 'unauthenticated');
        return;
      }
      pages(4)(n, req, res);
    });
    const saved: string[] = [];
    const client = createSessionClient({
      baseUrl: server.baseUrl,
      retries: 0,
      refreshAheadMs: false,
      session: { token: 'stale', refreshToken: 'svc_rt_1', sessionId: 's-1' },
      onTokens: (t) => void saved.push(t.token),
    });
    const ids = [];
    for await (const e of client.paginate('organizationAuditList', {
      path: { id: ORG },
      query: { page_size: 2 },
    }))
      ids.push(e.id);
    expect(ids).toHaveLength(4);
    expect(auths).toEqual(['Bearer stale', 'Bearer stale', 'Bearer fresh']);
    expect(saved).toEqual(['fresh']);
  });

  test('refuses, at the first item, operations that do not page and a page of its own', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', retries: 0 });
    const loose = (id: string) => client.paginate(id, {}).next();
    await expect(loose('meGet')).rejects.toThrow(/meGet is not a paged list/);
    await expect(loose('meSessionsList')).rejects.toThrow(/not a paged list/);
    await expect(loose('noSuchOperation')).rejects.toThrow(/Unknown operation/);
    await expect(
      client.paginate('organizationAuditList', { path: { id: ORG }, query: { page: 2 } as never }).next(),
    ).rejects.toThrow(/drives `page` itself/);
  });

  test('refuses an answer that is not a page', async () => {
    server = await startScriptedServer((_n, _req, res) => json(res, 200, [entry(1)]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    await expect(client.paginate('organizationAuditList', { path: { id: ORG } }).next()).rejects.toThrow(
      /other than \{ data, meta \}/,
    );
  });
});

describe('the default page size', () => {
  // The bundled spec is the truth: every operation that pages must default to its own maximum.
  const spec = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId?: string;
          parameters?: { $ref?: string; name?: string; in?: string; schema?: { maximum?: number } }[];
        }
      >
    >;
    components: { parameters: Record<string, { name: string; in: string; schema?: { maximum?: number } }> };
  };
  const resolve = (p: { $ref?: string; name?: string; in?: string; schema?: { maximum?: number } }) =>
    p.$ref ? spec.components.parameters[p.$ref.split('/').pop()!]! : p;
  const paged = Object.values(spec.paths).flatMap((item) =>
    Object.values(item)
      .filter((op) => typeof op === 'object' && op !== null && typeof op.operationId === 'string')
      .map((op) => ({ id: op.operationId!, params: (op.parameters ?? []).map(resolve) }))
      .filter((op) => op.params.some((p) => p.in === 'query' && p.name === 'page')),
  );

  test('there is at least the audit list', () => {
    expect(paged.map((op) => op.id)).toContain('organizationAuditList');
  });

  test.each(paged.map((op) => [op.id, op] as const))(
    '%s defaults to the maximum its spec allows',
    (id, op) => {
      const max = op.params.find((p) => p.in === 'query' && p.name === 'page_size')?.schema?.maximum;
      expect(
        maxPageSize((operations as Record<string, (typeof operations)[keyof typeof operations]>)[id]!),
      ).toBe(max);
    },
  );
});
