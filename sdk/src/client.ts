// createClient: openapi-fetch underneath, one method per operation of the generated index on top.
import createFetchClient, { type Client } from 'openapi-fetch';
import { authMiddleware, type TokenSource } from './auth.js';
import { apiBaseUrl } from './base-url.js';
import { callOperation, type CallContext } from './call.js';
import type { components, paths } from './generated/api.js';
import { operations, type OperationId } from './generated/operations.js';
import type {
  LooseOperationId,
  LooseParams,
  OperationArgs,
  OperationMethods,
  OperationResult,
  RequestOptions,
} from './operation-types.js';
import { paginate, type PageItem, type PagedOperationId, type PaginateArgs } from './paginate.js';
import { DEFAULT_RETRY_POLICY, sleep } from './retry.js';
import { fileForm, requestOptionsOf, type UploadFile, type UploadOptions } from './upload.js';
import type WebSocket from 'ws';
import { openConsoleWith, openShellWith, type ShellOptions, type SocketOptions } from './sockets.js';
import { SDK_VERSION } from './version.js';
import {
  waitForOperation,
  type FinishedOperation,
  type WaitForOperationOptions,
} from './wait-for-operation.js';

export interface ClientOptions {
  /** The platform's URL (`https://api.example.com`); `/api/v2` is appended unless present. */
  baseUrl: string;
  /** A fixed access or API token (`svc_pat_...`), sent as `Authorization: Bearer`. */
  token?: string;
  /** Asked before every request and retry; wins over `token`. Return null to send none. */
  getToken?: TokenSource;
  /** Defaults to the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of idempotent requests after connection failures, timeouts, 429 and 503. Default 2. */
  retries?: number;
  /** Per attempt, in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Sent with every request. */
  headers?: Record<string, string>;
  /** Your product token, put before the SDK's in User-Agent (`svcctl/1.2.0`). */
  userAgent?: string;
}

export interface SvcClientCore {
  /** The openapi-fetch client (authenticated, but without retries, timeouts or thrown errors). */
  readonly raw: Client<paths>;
  /** The API root requests go to, `/api/v2` included. */
  readonly baseUrl: string;
  /** Any operation by id, with the same exact types as its method. */
  request<K extends OperationId>(operationId: K, ...args: OperationArgs<K>): Promise<OperationResult<K>>;
  /** Any operation by a runtime id, with loosely typed params (for svcctl and other generic callers). */
  request<S extends string>(
    operationId: S & LooseOperationId<S>,
    params?: LooseParams,
    options?: RequestOptions,
  ): Promise<unknown>;
  /**
   * Replaces the caller's avatar (`PUT /me/avatar`, operation `meAvatarUpload`): the bytes are sent
   * as multipart/form-data with the one part `file`. Resolves to the caller's identity, with the new
   * `avatar_asset_id`.
   */
  uploadAvatar(file: UploadFile, options?: UploadOptions): Promise<components['schemas']['Me']>;
  /**
   * Replaces an organization's icon (`PUT /organizations/{id}/icon`, operation
   * `organizationIconUpload`; Owners and Admins), sent as `uploadAvatar` sends an avatar. Resolves to
   * the organization with its new `icon_asset_id`.
   */
  uploadOrganizationIcon(
    organizationId: string,
    file: UploadFile,
    options?: UploadOptions,
  ): Promise<components['schemas']['Organization']>;
  /**
   * For an application's client (token `svc_app_...`): a client that makes every request as the user
   * `userId`, who delegated to the application (`X-Acting-As-User`). The user's delegation decides
   * what it may do; a user without a live delegation is refused with 403.
   */
  actingAs(userId: string): SvcClient;
  /**
   * Every item of every page of a paged list (`{ data, meta }`), as an async iterator: a page is
   * fetched only when the item after the last one held is asked for, from page 1 to
   * `meta.total_pages`. `page_size` is passed through (default: the most the operation allows);
   * `options.signal` ends the walk. Operations that do not page are refused at compile time.
   */
  paginate<K extends PagedOperationId>(
    operationId: K,
    ...args: PaginateArgs<K>
  ): AsyncGenerator<PageItem<K>, void, undefined>;
  /** Any paged operation by a runtime id, with loosely typed params (svcctl's `--all`). */
  paginate<S extends string>(
    operationId: S & LooseOperationId<S>,
    params?: LooseParams,
    options?: RequestOptions,
  ): AsyncGenerator<unknown, void, undefined>;
  /**
   * Polls the operation (`GET /service-instances/{id}/operations/{operation_id}`) until it is
   * `succeeded`, `failed` or `cancelled`, and resolves with it as it ended: a failed operation resolves
   * too (check `status`; `error` says why), since the API answered. Rejects as every call does
   * (SvcApiError for a 404 and the like, after the usual retries of a GET) and with the signal's
   * reason when `options.signal` aborts. Polls at once, then after 250 ms, growing to every 2 s;
   * `options.onProgress` hears of each change of status, phase or progress.
   */
  waitForOperation(
    instanceId: string,
    operationId: string,
    options?: WaitForOperationOptions,
  ): Promise<FinishedOperation>;
  /**
   * Attaches to the command console of a workload (`POST .../console/ticket`, then the ticket's
   * WebSocket on the edge gateway): resolves with the open `ws` socket, whose binary frames carry the
   * console's bytes both ways (the scrollback arrives first). An upgrade the gateway refuses rejects
   * with SvcSocketRefused.
   */
  openConsole(instanceId: string, resourceId: string, options?: SocketOptions): Promise<WebSocket>;
  /**
   * Opens a shell in a workload or machine (`POST .../shell/ticket`, then its `svc-pty-v1` WebSocket,
   * of `columns` x `rows`): binary frames are the terminal's bytes, text frames ShellControl JSON
   * (`exit`, `session_end`); resize with resizeShell(). A refused upgrade rejects with SvcSocketRefused.
   */
  openShell(instanceId: string, resourceId: string, options?: ShellOptions): Promise<WebSocket>;
}

export type SvcClient = SvcClientCore & OperationMethods;

export const DEFAULT_TIMEOUT_MS = 30_000;

export function createClient(options: ClientOptions): SvcClient {
  const retries = options.retries ?? DEFAULT_RETRY_POLICY.retries;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(retries) || retries < 0)
    throw new TypeError(`retries must be a whole number >= 0, got ${retries}`);
  if (!(timeoutMs > 0)) throw new TypeError(`timeoutMs must be positive, got ${timeoutMs}`);

  const baseUrl = apiBaseUrl(options.baseUrl);
  const userAgent = [options.userAgent, `svcplatform-sdk/${SDK_VERSION}`].filter(Boolean).join(' ');
  const raw = createFetchClient<paths>({
    baseUrl,
    fetch: options.fetch,
    headers: { 'User-Agent': userAgent, ...options.headers },
  });
  const getToken = options.getToken ?? (options.token ? () => options.token : null);
  if (getToken) raw.use(authMiddleware(getToken));

  const ctx: CallContext = {
    raw,
    // Resolved per call, not captured now, so a fetch installed later (a test's mock) is seen.
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    retries,
    timeoutMs,
    random: Math.random,
    sleep,
  };
  const call = (operationId: string, params?: LooseParams, callOptions?: RequestOptions) =>
    callOperation(ctx, operationId, params, callOptions);

  const methods = Object.fromEntries(
    Object.keys(operations).map((operationId) => [
      operationId,
      (params?: LooseParams, callOptions?: RequestOptions) => call(operationId, params, callOptions),
    ]),
  );
  return {
    ...methods,
    raw,
    baseUrl,
    request: call,
    uploadAvatar: (file: UploadFile, upload?: UploadOptions) =>
      call('meAvatarUpload', { body: fileForm(file, upload?.filename) }, requestOptionsOf(upload)),
    uploadOrganizationIcon: (id: string, file: UploadFile, upload?: UploadOptions) =>
      call(
        'organizationIconUpload',
        { path: { id }, body: fileForm(file, upload?.filename) },
        requestOptionsOf(upload),
      ),
    paginate: (operationId: string, params?: LooseParams, pageOptions?: RequestOptions) =>
      paginate(call, operationId, params, pageOptions),
    waitForOperation: (instanceId: string, operationId: string, waitOptions?: WaitForOperationOptions) =>
      waitForOperation(call, instanceId, operationId, waitOptions),
    openConsole: (instanceId: string, resourceId: string, socketOptions?: SocketOptions) =>
      openConsoleWith(call, instanceId, resourceId, socketOptions),
    openShell: (instanceId: string, resourceId: string, shellOptions?: ShellOptions) =>
      openShellWith(call, instanceId, resourceId, shellOptions),
    actingAs: (userId: string) =>
      createClient({ ...options, headers: { ...options.headers, 'X-Acting-As-User': userId } }),
  } as unknown as SvcClient;
}
