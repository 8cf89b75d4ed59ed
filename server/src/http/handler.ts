// The handler contract: a plain async function of the validated request, typed from the generated
// `operations`, returning the status and body. Refusals are thrown as ApiError.
import type { Logger } from 'pino';
import type { IncomingHttpHeaders } from 'node:http';
import type { operations as api } from '../../../generated/api.js';
import type { OperationId, operations as index } from '../../../generated/operations.js';
import type { KeyRing } from '../auth/crypto/signing-keys.js';
import type { PepperName } from '../auth/crypto/server-secrets.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import type { DeferredSessionCheck } from '../authz/deferred-session.js';
import type { SubstrateDriver } from '../substrate/driver.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Reach } from '../authz/reach.js';
import type { MultipartBody } from './multipart.js';

export interface Deps {
  sql: Sql;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Access-token signing keys, shared by every API process through the database. */
  keys: KeyRing;
  /** Keys signing the edge gateway's tickets (gateway/tickets.ts), shared through the database too. */
  ticketKeys: KeyRing;
  /** A server pepper for keyed digests, shared through the database (auth/crypto/server-secrets.ts). */
  pepper: (name?: PepperName) => Promise<Buffer>;
  /** Seals and opens secrets kept at rest (ENCRYPTION_KEY). */
  box: SecretBox;
  /**
   * The hosting substrate, for the few routes that read it directly (the file layer); jobs change it.
   * Null where SUBSTRATE names a driver not built yet: those routes answer as for a missing feature.
   */
  substrate: SubstrateDriver | null;
}

/** What a handler knows of the request beyond its validated parameters and body. */
export interface RequestContext extends Deps {
  requestId: string;
  /** The caller's address as Express resolves it under the configured proxy trust. */
  ip: string;
  userAgent: string | null;
  /** The Host the request was addressed to, lowercase, without port. */
  host: string;
  headers: IncomingHttpHeaders;
  header(name: string): string | undefined;
}

/** A caller signed in with an access token of a live session: everything its user may do. */
export interface SessionAuth {
  kind: 'session';
  userId: string;
  sessionId: string;
  elevatedUntil: Date | null;
  /** The session's current elevation epoch, which a new elevated token carries. */
  elevationEpoch: number;
  tokenExpiresAt: Date;
  reach: Reach;
  /** The session's liveness, when the operation's own statement checks it (authz/deferred-session.ts). */
  deferred?: DeferredSessionCheck;
}

/** A restricted personal API token (`svc_pat_...`): its grants of the operation's capability. */
export interface TokenAuth {
  kind: 'token';
  userId: string;
  tokenId: string;
  reach: Reach;
}

/** An application acting as a user who delegated to it (`X-Acting-As-User`); never elevated. */
export interface ActingAsAuth {
  kind: 'acting_as';
  userId: string;
  applicationId: string;
  delegationId: string;
  reach: Reach;
}

/** A registered application as itself (`svc_app_...`), holding the capabilities staff gave it. */
export interface ApplicationAuth {
  kind: 'application';
  applicationId: string;
}

/** A caller acting for a user. */
export type UserAuth = SessionAuth | TokenAuth | ActingAsAuth;
export type Auth = UserAuth | ApplicationAuth;
export type CallerKind = Auth['kind'] | 'anonymous';

interface AuthByKind {
  anonymous: null;
  session: SessionAuth;
  token: TokenAuth;
  acting_as: ActingAsAuth;
  application: ApplicationAuth;
}

/** The caller an operation's handler gets: one of the kinds its `x-callers` declares (null for anonymous). */
export type AuthOf<K extends OperationId> = AuthByKind[(typeof index)[K]['callers'][number] & CallerKind];

type Op<K extends OperationId> = api[K];
type Section<K extends OperationId, W extends string> = Op<K>['parameters'] extends { [P in W]?: infer T }
  ? [NonNullable<T>] extends [never]
    ? Record<string, never>
    : NonNullable<T>
  : Record<string, never>;

export type PathOf<K extends OperationId> = Section<K, 'path'>;
export type QueryOf<K extends OperationId> = Section<K, 'query'>;
export type BodyOf<K extends OperationId> =
  NonNullable<Op<K>['requestBody']> extends { content: { 'application/json': infer B } }
    ? B
    : // Uploads: the part `file`, read by multipart.ts (DECISIONS.md §1).
      NonNullable<Op<K>['requestBody']> extends { content: { 'multipart/form-data': object } }
      ? MultipartBody
      : undefined;

type Responses<K extends OperationId> = Op<K>['responses'];
// 304: a conditional GET whose validator still matches (the answer has no body; see ResultFor).
// 307: a browser route's redirect (the OAuth callback), its Location in `headers`.
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204 | 304 | 307>;
type Headers = Record<string, string>;
type ResultFor<S, R> = R extends { content: { 'application/json': infer B } }
  ? { status: S; body: B; headers?: Headers }
  : R extends { content: object }
    ? { status: S; body: Buffer; contentType: string; headers?: Headers }
    : { status: S; body?: undefined; headers?: Headers };

export type ResultOf<K extends OperationId> = {
  [S in SuccessStatus<K>]: ResultFor<S, Responses<K>[S]>;
}[SuccessStatus<K>];

export interface HandlerInput<K extends OperationId> {
  path: PathOf<K>;
  query: QueryOf<K>;
  body: BodyOf<K>;
  auth: AuthOf<K>;
  ctx: RequestContext;
}

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<ResultOf<K>>;

/** One key per operationId: a spec operation without a handler fails the type check. */
export type Handlers = { [K in OperationId]: Handler<K> };
export type AreaHandlers<K extends OperationId> = { [P in K]: Handler<P> };
