// A client of LXD's REST API (/1.0, the core that Incus shares): over the daemon's unix socket on this
// machine, or HTTPS with a client certificate for a remote cluster. Plain node:http: the API is JSON
// requests and background operations waited on with /wait, nothing a client library would add.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { WebSocket } from 'ws';
import { SubstrateUnreachableError } from '../driver.js';

export interface LxdConnection {
  /** `unix:/var/lib/lxd/unix.socket` or `https://host:8443`. */
  url: string;
  /** PEM client certificate and key for HTTPS (the cluster trusts the certificate). */
  cert?: string;
  key?: string;
  /** PEM of the cluster's certificate, when it is not signed by a CA this machine trusts. */
  ca?: string;
  /** The LXD project the platform's instances and volumes live in. */
  project: string;
}

/** An error answer of LXD (its JSON `error`), with the HTTP status. */
export class LxdError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`LXD: ${message}`);
    this.name = 'LxdError';
  }
}

/**
 * The error of an LXD answer: SubstrateUnreachableError when LXD says the member holding the thing does
 * not answer (every path that reads an error answer, JSON calls and raw file transfers alike), else LxdError.
 */
export function lxdError(status: number, message: string): Error {
  return MEMBER_UNREACHABLE.test(message) ? new SubstrateUnreachableError() : new LxdError(status, message);
}

export interface LxdResponse<T = unknown> {
  type: 'sync' | 'async' | 'error';
  status_code: number;
  metadata: T;
  operation?: string;
}

export interface LxdOperation {
  id: string;
  status: string;
  status_code: number;
  err: string;
  metadata: Record<string, unknown> | null;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string | Readable;
  /** Query parameters other than the project. */
  query?: Record<string, string>;
}

const OPERATION_TIMEOUT_S = 120;
/**
 * How LXD says the member holding an instance or volume does not answer (after about 10 s of trying; the
 * member is marked Offline some seconds later). Incus words it the same way.
 */
const MEMBER_UNREACHABLE =
  /missing event connection with target cluster member|cluster member .*offline|member is offline/i;

export class LxdClient {
  readonly #connection: LxdConnection;
  readonly #socketPath: string | null;
  readonly #base: URL | null;

  constructor(connection: LxdConnection) {
    this.#connection = connection;
    if (connection.url.startsWith('unix:')) {
      this.#socketPath = connection.url.slice('unix:'.length);
      this.#base = null;
    } else {
      this.#socketPath = null;
      this.#base = new URL(connection.url);
      if (this.#base.protocol !== 'https:') throw new Error('LXD_URL must be unix:PATH or https://HOST:PORT');
    }
  }

  get project(): string {
    return this.#connection.project;
  }

  /** A raw exchange: the answer's status, headers and body stream (file downloads, exports). */
  raw(req: RawRequest): Promise<IncomingMessage> {
    const query = new URLSearchParams({ ...req.query, project: this.#connection.project });
    const path = `${req.path}?${query.toString()}`;
    const options: RequestOptions = { method: req.method, path, headers: { ...req.headers } };
    const body = req.body;
    if (typeof body === 'string' || Buffer.isBuffer(body))
      options.headers = { ...options.headers, 'content-length': String(Buffer.byteLength(body)) };
    return new Promise((resolve, reject) => {
      const sent = this.#socketPath
        ? httpRequest({ ...options, socketPath: this.#socketPath, host: 'lxd' }, resolve)
        : httpsRequest(
            {
              ...options,
              host: this.#base!.hostname,
              port: this.#base!.port || 8443,
              cert: this.#connection.cert,
              key: this.#connection.key,
              ca: this.#connection.ca,
            },
            resolve,
          );
      sent.once('error', reject);
      if (body === undefined) sent.end();
      else if (typeof body === 'string' || Buffer.isBuffer(body)) sent.end(body);
      else body.once('error', reject).pipe(sent);
    });
  }

  /** A WebSocket of the API (an exec operation's streams), opened with the same credentials. */
  websocket(path: string, query: Record<string, string>): WebSocket {
    const search = new URLSearchParams({ ...query, project: this.#connection.project }).toString();
    // Binary frames arrive as one Buffer each, not the `ws` default of a list of fragments.
    const options = { perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 };
    if (this.#socketPath) return new WebSocket(`ws+unix:${this.#socketPath}:${path}?${search}`, options);
    return new WebSocket(`wss://${this.#base!.host}${path}?${search}`, {
      ...options,
      cert: this.#connection.cert,
      key: this.#connection.key,
      ca: this.#connection.ca,
    });
  }

  /** A JSON request; an error answer throws LxdError. */
  async call<T = unknown>(method: string, path: string, body?: unknown, query?: Record<string, string>) {
    const res = await this.raw({
      method,
      path,
      query,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = JSON.parse((await readAll(res)).toString('utf8') || '{}') as LxdResponse<T> & {
      error?: string;
      error_code?: number;
    };
    if (parsed.type === 'error' || (res.statusCode ?? 500) >= 400)
      throw lxdError(parsed.error_code ?? res.statusCode ?? 500, parsed.error || `HTTP ${res.statusCode}`);
    return parsed;
  }

  /** A request that starts a background operation, waited on until it ends; a failed one throws. */
  async run(
    method: string,
    path: string,
    body?: unknown,
    query?: Record<string, string>,
  ): Promise<LxdOperation> {
    const started = await this.call<LxdOperation>(method, path, body, query);
    if (started.type !== 'async' || !started.operation) return started.metadata;
    return this.wait(started.operation);
  }

  async wait(operation: string): Promise<LxdOperation> {
    // A clustered daemon answers operation URLs with `?project=`: the query is ours to set.
    const path = `${operation.split('?')[0]}/wait`;
    const done = await this.call<LxdOperation>('GET', path, undefined, {
      timeout: String(OPERATION_TIMEOUT_S),
    });
    const op = done.metadata;
    if (op.status_code >= 400 || op.status === 'Failure') throw lxdError(op.status_code, op.err || op.status);
    if (op.status === 'Running')
      throw new LxdError(504, `operation ${op.id} still running after ${OPERATION_TIMEOUT_S} s`);
    return op;
  }

  /** `call` that answers null for a 404. */
  async find<T>(path: string, query?: Record<string, string>): Promise<T | null> {
    try {
      return (await this.call<T>('GET', path, undefined, query)).metadata;
    } catch (err) {
      if (err instanceof LxdError && err.status === 404) return null;
      throw err;
    }
  }
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Whether `err` is LXD saying the thing is already there (a second create of an idempotent call). */
export function isConflict(err: unknown): boolean {
  return err instanceof LxdError && (err.status === 409 || /already exists/i.test(err.message));
}

export function isNotFound(err: unknown): boolean {
  return err instanceof LxdError && (err.status === 404 || /not found/i.test(err.message));
}
