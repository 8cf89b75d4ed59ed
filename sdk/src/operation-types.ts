// Argument and result types of every operation, computed from the generated operation index and
// the openapi-typescript output. Nothing here names an operation: a new one in the spec gets exact
// types by regenerating.
import type { operations as ApiOperations } from './generated/api.js';
import type { OperationId, operations as operationIndex } from './generated/operations.js';

type Index = typeof operationIndex;
type ApiOperation<K extends OperationId> = ApiOperations[K];

/** What binary operations (asset streams, file reads) resolve to. */
export interface BinaryBody {
  bytes: Uint8Array;
  /** The response's own Content-Type, e.g. `image/png`. */
  contentType: string;
  /** The strong validator of the bytes, to send back as `If-None-Match`; null when the answer has none. */
  etag: string | null;
  /** True for a 304 to a conditional request: the copy you hold is current, and `bytes` is empty. */
  notModified: boolean;
}

/** Bodies sent as they are, for operations whose request media type is neither JSON nor multipart. */
export type RawBody = string | Uint8Array | Blob;

/** Headers sent as they are, after the spec's declared header parameters. */
export type ExtraHeaders = Record<string, string>;

/** No keys: what a section without parameters contributes. */
type Empty = Record<never, never>;

// `path?: never` (no such parameters) reads as `undefined` and disappears; a section whose
// parameters are all optional is itself optional.
type Section<Name extends string, T> = [NonNullable<T>] extends [never]
  ? Empty
  : undefined extends T
    ? { [P in Name]?: NonNullable<T> }
    : Empty extends T
      ? { [P in Name]?: T }
      : { [P in Name]: T };

type JsonMediaType = 'application/json' | `application/${string}+json`;

// A file part may be given as a Blob where the spec says `format: binary` (typed as string).
type MultipartBody<T> = FormData | { [P in keyof T]: T[P] extends string ? string | Blob : T[P] };

type BodyValue<Content> = [Extract<keyof Content, JsonMediaType>] extends [never]
  ? 'multipart/form-data' extends keyof Content
    ? MultipartBody<Content['multipart/form-data']>
    : RawBody
  : Content[Extract<keyof Content, JsonMediaType>];

type BodySection<RequestBody> = [NonNullable<RequestBody>] extends [never]
  ? Empty
  : NonNullable<RequestBody> extends { content: infer Content }
    ? undefined extends RequestBody
      ? { body?: BodyValue<Content> }
      : { body: BodyValue<Content> }
    : Empty;

// One flat object type, so errors and hovers show `{ path: ...; body: ... }` instead of an intersection.
export type Simplify<T> = { [P in keyof T]: T[P] };

/** The exact first argument of `client[operationId](...)`. */
export type OperationParams<K extends OperationId> = Simplify<
  Section<'path', ApiOperation<K>['parameters']['path']> &
    Section<'query', ApiOperation<K>['parameters']['query']> &
    Section<'header', ApiOperation<K>['parameters']['header']> &
    BodySection<ApiOperation<K>['requestBody']> & { headers?: ExtraHeaders }
>;

/** Per-call overrides of the client's defaults. */
export interface RequestOptions {
  /** Aborting it ends the call at once (also during a backoff wait) with the signal's reason. */
  signal?: AbortSignal;
  /** Per attempt; defaults to the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Defaults to the client's `retries`. */
  retries?: number;
}

/** The keys of T that must be given. */
export type RequiredKeys<T> = { [P in keyof T]-?: Empty extends Pick<T, P> ? never : P }[keyof T];

/** The params argument may be left out when nothing in it is required. */
export type OperationArgs<K extends OperationId> = [RequiredKeys<OperationParams<K>>] extends [never]
  ? [params?: OperationParams<K>, options?: RequestOptions]
  : [params: OperationParams<K>, options?: RequestOptions];

type ResponseType<K extends OperationId> = Index[K]['responseType'];
type SuccessStatus<K extends OperationId> = Index[K]['successStatus'];
type Responses<K extends OperationId> = ApiOperation<K>['responses'];

type JsonSuccess<K extends OperationId> =
  SuccessStatus<K> extends keyof Responses<K>
    ? Responses<K>[SuccessStatus<K>] extends { content: infer Content }
      ? Content[Extract<keyof Content, ResponseType<K>>]
      : undefined
    : never;

/** What a call resolves to: the parsed JSON body, undefined without content, or bytes. */
export type OperationResult<K extends OperationId> =
  ResponseType<K> extends null
    ? undefined
    : ResponseType<K> extends JsonMediaType
      ? JsonSuccess<K>
      : BinaryBody;

/** One method per operation in the index. */
export type OperationMethods = {
  [K in OperationId]: (...args: OperationArgs<K>) => Promise<OperationResult<K>>;
};

/** Parameters as a caller without static types (svcctl) builds them from flags. */
export interface LooseParams {
  path?: Record<string, string | number | boolean>;
  query?: Record<string, unknown>;
  header?: Record<string, string>;
  headers?: ExtraHeaders;
  body?: unknown;
}

type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never;

/**
 * Accepts `string` and unions of ids (an index entry's `operationId`), but not a single literal: a
 * literal id must go through the exact overload, so a typo in its params cannot fall through to
 * the loose one.
 */
export type LooseOperationId<S extends string> = string extends S ? S : true extends IsUnion<S> ? S : never;
