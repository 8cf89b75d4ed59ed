// `svcctl api`: sends one request through the SDK's raw (openapi-fetch) client, so authentication
// and User-Agent are the same as for generated commands, and turns failures into the SDK's error
// types so they print and exit like every other command's.
import { apiErrorFromResponse, isSvcApiError, SvcNetworkError, SvcTimeoutError } from '@svcplatform/sdk';
import type { ParsedInput } from './argv/spec.js';
import { readData } from './data-source.js';
import { parseApiRequest } from './api-request.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { isSessionClient, openClient } from './sdk-client.js';
import { resolveSettings } from './settings.js';

const TIMEOUT_MS = 30_000;

export async function runApi(input: ParsedInput): Promise<void> {
  const [method = '', rawPath = ''] = input.args;
  const opts = input.options as {
    data?: string;
    query?: string[];
    header?: string[];
    output?: string;
    paginate?: boolean;
  };
  const request = parseApiRequest(method, rawPath, opts.query ?? [], opts.header ?? []);
  // fetch refuses these, and the failure would otherwise look like a network error.
  if (opts.data !== undefined && (request.method === 'GET' || request.method === 'HEAD')) {
    throw new UsageError(`${request.method} requests cannot carry --data`);
  }
  if (opts.paginate && request.method !== 'GET') throw new UsageError('--paginate follows the pages of a GET only');
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const body = opts.data === undefined ? undefined : await readData(opts.data);
  const client = await openClient(settings);
  const url = `${client.baseUrl}${request.path}`;
  type Result = { data?: unknown; error?: unknown; response: Response };
  const send = async (query = request.query): Promise<Result> => {
    try {
      return await client.raw.request(
        request.method.toLowerCase() as 'get',
        request.path as never,
        {
          params: { query },
          body,
          headers: request.headers,
          parseAs: 'arrayBuffer',
          signal: AbortSignal.timeout(TIMEOUT_MS),
        } as never,
      );
    } catch (err) {
      if (err instanceof DOMException && err.name === 'TimeoutError') {
        throw new SvcTimeoutError(request.method, url, TIMEOUT_MS);
      }
      // undici reports every transport failure as this TypeError, with the reason in `cause`.
      if (err instanceof TypeError && err.message === 'fetch failed')
        throw new SvcNetworkError(request.method, url, err);
      throw err;
    }
  };
  let result = await send();
  // The raw client sends the session's access token but never refreshes it. When it is refused, a
  // secured operation through the session client refreshes the pair (and saves it) if the session
  // still stands; the request then goes out once more, with the new token.
  if (result.response.status === 401 && isSessionClient(client)) {
    const before = client.tokens()?.token;
    try {
      await client.authSessionGet();
    } catch (err) {
      if (!isSvcApiError(err) || err.status !== 401) throw err;
    }
    const after = client.tokens()?.token;
    if (after && after !== before) result = await send();
  }
  const { response } = result;
  if (!response.ok) throw apiErrorFromResponse(response, result.error, null);
  let value = decode(result.data, response);
  if (opts.paginate) {
    // A paged list ({data, meta}, DECISIONS.md §1): the later pages are fetched one by one and the
    // whole list printed as one page, the shape `--all` prints for the generated list commands.
    const first = asPage(value);
    if (first) {
      const items = [...first.data];
      for (let page = first.meta.page + 1; page <= first.meta.total_pages; page += 1) {
        const next = await send({ ...request.query, page: String(page) });
        if (!next.response.ok) throw apiErrorFromResponse(next.response, next.error, null);
        const body = asPage(decode(next.data, next.response));
        if (!body || body.data.length === 0) break;
        items.push(...body.data);
      }
      value = { data: items, meta: { page: 1, page_size: items.length, total_items: items.length, total_pages: 1 } };
    }
  }
  await writeResult(value, settings, { file: opts.output });
}

interface Page {
  data: unknown[];
  meta: { page: number; total_pages: number };
}

function asPage(value: unknown): Page | null {
  if (typeof value !== 'object' || value === null) return null;
  const { data, meta } = value as Partial<Page>;
  if (!Array.isArray(data) || typeof meta?.page !== 'number' || typeof meta.total_pages !== 'number') return null;
  return { data, meta };
}

/** JSON becomes a value, text a string, anything else stays bytes. */
function decode(data: unknown, response: Response): unknown {
  if (!(data instanceof ArrayBuffer)) return undefined;
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  const bytes = new Uint8Array(data);
  if (/^application\/(.+\+)?json\b/i.test(contentType)) {
    const text = new TextDecoder().decode(bytes);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
  if (/^text\//i.test(contentType)) return new TextDecoder().decode(bytes);
  return { bytes, contentType };
}
