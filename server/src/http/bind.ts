// Binds every operation of the index to its handler. A request runs the operation the validator
// matched and checked it against (req.openapi, see validator.ts), found in a map: one route match per
// request whatever the number of operations, and the handler that runs is always the one whose
// contract was checked.
import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { operations as generatedOperations, type OperationId } from '../../../generated/operations.js';
import { authorize, type OperationRule } from '../authz/authorize.js';
import { resolveCredential } from '../authz/credentials.js';
import { holdsAnySystemPermission } from '../authz/staff.js';
import { invalidFieldValue } from './errors.js';
import { asInvalidPath } from './file-paths.js';
import type { CallerKind, Deps, Handler, Handlers, RequestContext, UserAuth } from './handler.js';
import type { Sql, TransactionSql } from '../db/client.js';
import { claimedContext, claimsOwnKey, idempotent } from '../operations/idempotency.js';
import { hasPendingUpload, readUpload } from './multipart.js';
import type { ValidatedRequest } from './validator.js';

/**
 * A handler's RequestContext: the app's dependencies and what it knows of the request, the latter
 * read on first use (most handlers read none of it, and req.ip and req.hostname work through the
 * proxy-trust rules on every read).
 */
class HttpContext implements RequestContext {
  readonly sql: Deps['sql'];
  readonly config: Deps['config'];
  readonly clock: Deps['clock'];
  readonly log: Deps['log'];
  readonly keys: Deps['keys'];
  readonly ticketKeys: Deps['ticketKeys'];
  readonly pepper: Deps['pepper'];
  readonly box: Deps['box'];
  readonly substrate: Deps['substrate'];
  readonly requestId: string;
  readonly headers: IncomingHttpHeaders;
  readonly #req: Request;
  #ip: string | undefined;
  #host: string | undefined;

  constructor(deps: Deps, req: Request, requestId: string) {
    this.sql = deps.sql;
    this.config = deps.config;
    this.clock = deps.clock;
    this.log = deps.log;
    this.keys = deps.keys;
    this.ticketKeys = deps.ticketKeys;
    this.pepper = deps.pepper;
    this.box = deps.box;
    this.substrate = deps.substrate;
    this.requestId = requestId;
    this.headers = req.headers;
    this.#req = req;
  }

  get ip(): string {
    return (this.#ip ??= this.#req.ip ?? this.#req.socket.remoteAddress ?? 'unknown');
  }

  get userAgent(): string | null {
    return this.#req.get('user-agent') ?? null;
  }

  get host(): string {
    return (this.#host ??= (this.#req.hostname ?? '').toLowerCase());
  }

  header(name: string): string | undefined {
    return this.#req.get(name);
  }
}

/** Whether `value` holds a string with U+0000 anywhere (no allocation: almost no request has one). */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasNul);
  for (const key in value)
    if (Object.hasOwn(value, key) && hasNul((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** The JSON pointer of the first string holding U+0000 (called once hasNul found one). */
function nulPointer(value: unknown, pointer = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? pointer || '/' : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Object.entries(value)) {
    const hit = nulPointer(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (hit !== null) return hit;
  }
  return null;
}

/** PostgreSQL text cannot store U+0000: a request that holds one anywhere is refused. */
function refuseNul(route: string, location: 'path' | 'query' | 'body', value: unknown): void {
  if (!hasNul(value)) return;
  const hit = nulPointer(value)!;
  const pointer = location === 'body' ? hit : hit.slice(1);
  const issues = [{ location, pointer, message: 'contains U+0000' }];
  throw (
    asInvalidPath(route, issues) ??
    invalidFieldValue('Text must not contain the NUL character (U+0000).', issues)
  );
}

interface Bound {
  id: OperationId;
  /** The spec path, for the request log. */
  path: string;
  /** The operation declares `Idempotency-Key` (a create or an operation start): see keyed(). */
  keyed: boolean;
  /** null for an anonymous operation, which reads no credential even when one is presented. */
  rule: OperationRule | null;
  /** A session's liveness is checked by the handler's own statement (authz/deferred-session.ts). */
  foldsSessionCheck: boolean;
  handler: Handler<OperationId>;
}

/** What bind needs of an operation index entry (the generated one, or a test's own). */
export interface BindableOperation {
  method: string;
  path: string;
  security: readonly string[];
  /** `x-callers`, `x-capability`, `x-capability-free`, `x-service-scoped` (authz/authorize.ts). */
  callers: readonly string[];
  capability: string | null;
  parameters?: readonly { name: string; in: string }[];
  capabilityFree?: boolean;
  serviceScoped?: boolean;
  /** See FOLDED_SESSION_CHECK (a test's own operations set it here). */
  foldsSessionCheck?: boolean;
}

/**
 * The operations whose handler checks a session's liveness in its own statement (authz/deferred-session.ts):
 * the poll, which clients repeat while they wait. Reads only: nothing may be done before the check.
 */
const FOLDED_SESSION_CHECK: ReadonlySet<string> = new Set<OperationId>(['serviceOperationGet']);

/** Staff routes, which all need an elevated session (seed document 1, "Authentication"). */
const ADMIN_PREFIX = '/admin/';
const CALLER_KINDS: readonly string[] = ['anonymous', 'session', 'token', 'application', 'acting_as'];

/** The operation's declared callers, checked once at start-up: an undeclared operation never serves. */
function ruleOf(id: string, op: BindableOperation): OperationRule | null {
  const unknown = op.callers.filter((c) => !CALLER_KINDS.includes(c));
  if (op.callers.length === 0 || unknown.length > 0) {
    throw new Error(
      `operation ${id} must declare x-callers (${CALLER_KINDS.join(', ')}); got [${op.callers.join(', ')}]`,
    );
  }
  const anonymous = op.callers.includes('anonymous');
  if (anonymous !== (op.security.length === 0) || (anonymous && op.callers.length > 1)) {
    throw new Error(`operation ${id}: x-callers [anonymous] goes with security [] and with no other kind`);
  }
  if (anonymous) return null;
  return {
    callers: op.callers as CallerKind[],
    capability: op.capability,
    capabilityFree: op.capabilityFree ?? false,
    admin: op.path.startsWith(ADMIN_PREFIX),
    serviceScoped: op.serviceScoped ?? false,
  };
}

type Result = { status: number; body?: unknown; contentType?: string; headers?: Record<string, string> };

/**
 * A keyed request (DECISIONS.md §4, §6): the handler runs inside the transaction that claims the key,
 * on a context whose `sql` is that transaction (its own `begin` becomes a savepoint), so the key and
 * everything the handler wrote commit together or not at all. A retry answers the stored answer.
 */
async function keyed(
  operationId: string,
  ctx: RequestContext,
  auth: UserAuth,
  request: unknown,
  handler: (tx: Sql) => Promise<Result>,
): Promise<Result> {
  let first: Result | null = null;
  const stored = await idempotent(ctx, auth, operationId, request, async (tx) => {
    first = await handler(asPool(tx as TransactionSql));
    return { status: first.status, body: first.body ?? null };
  });
  return first ?? { status: stored.status, body: stored.body ?? undefined };
}

/** A transaction where handlers expect the pool: a nested `begin` is a savepoint of it. */
function asPool(tx: TransactionSql): Sql {
  return Object.assign(tx, {
    begin: (a: unknown, b?: unknown) => tx.savepoint((typeof a === 'function' ? a : b) as never),
  }) as unknown as Sql;
}

/**
 * The middleware that runs the operation the validator matched (mount it right after the validator,
 * in the same layer: Express resets req.params between layers). A request the validator matched to no
 * operation (outside `basePath`) passes on.
 */
export function bindOperations(
  handlers: Handlers,
  deps: Deps,
  basePath: string,
  operations: Record<string, BindableOperation> = generatedOperations,
): RequestHandler {
  // the validator's openApiRoute (base path + spec path), then the upper-case method
  const table = new Map<string, Map<string, Bound>>();
  for (const id of Object.keys(operations) as OperationId[]) {
    const op = operations[id]!;
    const route = `${basePath}${op.path}`;
    let methods = table.get(route);
    if (!methods) table.set(route, (methods = new Map()));
    const foldsSessionCheck = op.foldsSessionCheck ?? FOLDED_SESSION_CHECK.has(id);
    if (foldsSessionCheck && op.method.toUpperCase() !== 'GET')
      throw new Error(`operation ${id}: only a GET may check the session in its own statement`);
    methods.set(op.method.toUpperCase(), {
      id,
      foldsSessionCheck,
      path: op.path,
      // A handler that claims its key itself (after work that must not hold a transaction) is not wrapped.
      keyed:
        (op.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key') &&
        !claimsOwnKey(handlers[id]),
      rule: ruleOf(id, op),
      handler: handlers[id] as Handler<OperationId>,
    });
  }

  async function run(
    bound: Bound,
    params: Record<string, unknown>,
    req: Request,
    res: Response,
  ): Promise<void> {
    res.locals.routeTemplate = bound.path;
    const ctx = new HttpContext(deps, req, res.locals.requestId as string);
    refuseNul(bound.path, 'path', params);
    refuseNul(bound.path, 'query', req.query);
    refuseNul(bound.path, 'body', req.body);
    let auth = null;
    if (bound.rule) {
      const credential = await resolveCredential(ctx, { deferSessionCheck: bound.foldsSessionCheck });
      // Only a session on a staff route needs to know whether its account is staff at all.
      const staff =
        bound.rule.admin && credential.kind === 'session'
          ? await holdsAnySystemPermission(ctx.sql, credential.userId)
          : undefined;
      auth = authorize(bound.rule, credential, ctx.clock.now(), { staff });
    }
    // An upload's body is read only now that the caller is known (multipart.ts).
    const body: unknown = hasPendingUpload(req) ? await readUpload(req) : req.body;
    const call = (c: RequestContext) =>
      bound.handler({
        path: params as never,
        query: req.query as never,
        body: body as never,
        auth: auth as never,
        ctx: c,
      }) as Promise<Result>;
    const deferred = auth?.kind === 'session' ? auth.deferred : undefined;
    let result: Result;
    try {
      result =
        bound.keyed && auth && auth.kind !== 'application' && req.get('idempotency-key') !== undefined
          ? await keyed(bound.id, ctx, auth, { path: params, body }, (tx) =>
              call(claimedContext(new HttpContext({ ...deps, sql: tx }, req, ctx.requestId))),
            )
          : await call(ctx);
    } catch (err) {
      // A session no longer live gets its 401, not the handler's answer (a 404 would tell it something).
      await deferred?.settleAlone(ctx.sql);
      throw err;
    }
    await deferred?.settleAlone(ctx.sql);
    if (result.headers) res.set(result.headers);
    // (res.status() would check the code: these come from the handlers' typed results.)
    res.statusCode = result.status;
    // 204 and 304 never carry a body (their typed results have none).
    if (result.body === undefined || result.status === 304) res.end();
    else if (Buffer.isBuffer(result.body))
      res.type(result.contentType ?? 'application/octet-stream').send(result.body);
    else res.json(result.body);
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    const openapi = (req as ValidatedRequest).openapi;
    const bound = openapi && table.get(openapi.openApiRoute)?.get(req.method);
    if (!bound) {
      next();
      return;
    }
    run(bound, openapi.pathParams, req, res).catch(next);
  };
}
