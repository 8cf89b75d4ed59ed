// The conformance run: every operation of the bundled spec, driven over HTTP against the real app
// (ARCHITECTURE.md "Tests"). Nothing here names an operation; a new one in the spec is covered by
// the same code. Property settings (runs, seed, shrinking) are in property.ts.
import { randomUUID } from 'node:crypto';
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { handlers } from '../../server/src/handlers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { inShard } from '../support/shards.js';
import { isFilePathIssue } from '../../server/src/http/file-paths.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { closedObjectSlots, openObjectSchemas, withFieldAt } from './closed-objects.js';
import { checkProperty } from './property.js';
import { hostileInputs, invalidInputCases, toRequest, validInput, type OperationInput } from './request.js';
import { createResponseChecker, receive, type Received } from './response-check.js';
import type { Schema } from './json-schema.js';
import { createSchemaValidator } from './schema-validator.js';
import { apiPrefix, loadSpec, schemaResolver, walkOperations, type WalkedOperation } from './spec-walk.js';

/**
 * The code a request breaking the contract gets: invalid-request, but invalid-path when what broke is a
 * file's path on a files route (DECISIONS.md §6, §8: unsafe paths are one code, whichever layer finds them).
 */
function contractCode(
  op: { path: string },
  errors: { location: string; pointer: string }[] | undefined,
): string {
  const aboutPath = errors?.length && errors.every((e) => isFilePathIssue(op.path, e));
  return aboutPath ? 'invalid-path' : 'invalid-request';
}

const doc = loadSpec();
const ops = walkOperations(doc);
const resolve = schemaResolver(doc);
const validator = createSchemaValidator(doc);
const checker = createResponseChecker(doc, validator);
// The same arbitraries serve an operation's runs without and with a session.
const invalidCasesOf = new Map<string, ReturnType<typeof invalidInputCases>>();
const invalidCasesFor = (op: WalkedOperation) => {
  let cases = invalidCasesOf.get(op.operationId);
  if (!cases) invalidCasesOf.set(op.operationId, (cases = invalidInputCases(op, resolve, validator)));
  return cases;
};

/**
 * Registers the run's hooks and the tests of one shard: every `shards`-th operation from `shard`, and
 * the whole-spec checks in shard 0. The run is split over several test files so parallel workers share it.
 */
export function conformance(shard: number, shards: number): void {
  let app: TestApp;
  let smtp: TestSmtp;
  /** A real signed-in session, so secured operations are exercised past authentication too. */
  let signedIn: Record<string, string>;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    // Rate limits scaled out of reach: a tripped limit would turn property runs into 429s.
    // Capabilities on, so their routes answer as built (off, they answer 501 by design: test/domain-connect).
    app = await startTestApp({
      env: { SOURCE_RATE_LIMIT_SCALE: '1000', SMTP_URL: smtp.url, CAPABILITIES: 'domain_connect' },
    });
    const { session } = await newAccount(app, smtp, 'conformance');
    signedIn = { Authorization: `Bearer ${session.token}` };
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  const apiBase = () => `${app.baseUrl}${apiPrefix(doc)}`;

  async function call(
    op: WalkedOperation,
    input: OperationInput,
    headers: Record<string, string> = {},
  ): Promise<Received> {
    const { url, init } = toRequest(apiBase(), op, input, headers);
    return receive(await fetch(url, init));
  }

  interface Problem {
    code?: string;
    errors?: { location: string; pointer: string; message: string }[];
  }
  const problemOf = (res: Received) => (res.json ?? {}) as Problem;
  const show = (res: Received) => `${res.status} ${new TextDecoder().decode(res.bytes).slice(0, 600)}`;
  /** Valid inputs, the same on every run, so a failure here reproduces. */
  const sampleInput = (op: WalkedOperation, full = false, n = 1) =>
    fc.sample(validInput(op, resolve, { full }), { numRuns: n, seed: 42 });
  const matches = (schema: Schema, value: unknown) => validator.errors(schema, value).length === 0;
  const holdsObject = (v: unknown): boolean =>
    v !== null && typeof v === 'object' && (!Array.isArray(v) || v.some(holdsObject));
  const samplesHoldObjects = (op: WalkedOperation) =>
    sampleInput(op, true, 3).some((i) => holdsObject(i.body));

  if (shard === 0)
    describe('the spec, the operation index and the handler map', () => {
      const specIds = ops.map((o) => o.operationId);

      it('operationIds are unique', () => {
        expect(specIds.filter((id, i) => specIds.indexOf(id) !== i)).toEqual([]);
      });
      it('every spec operation has a handler', () => {
        expect(specIds.filter((id) => !Object.hasOwn(handlers, id))).toEqual([]);
      });
      it('every handler key is a spec operation', () => {
        expect(Object.keys(handlers).filter((id) => !specIds.includes(id))).toEqual([]);
      });
      it('the operation index lists exactly the spec operations', () => {
        expect(Object.keys(operations).sort()).toEqual([...specIds].sort());
      });
    });

  // Credentials that must not authenticate (DECISIONS.md §3 formats, so the parsers get past the prefix).
  const BAD_CREDENTIALS: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a malformed bearer token', { Authorization: 'Bearer not-a-token' }],
    ['an unknown personal API token', { Authorization: `Bearer svc_pat_${randomUUID()}_${'A'.repeat(43)}` }],
    ['an unsigned JWT', { Authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' }],
  ];

  for (const op of ops.filter(inShard(shard, shards))) {
    describe(`${op.operationId}: ${op.method.toUpperCase()} ${op.path}`, () => {
      it('matches its operation index entry', () => {
        const entry = (operations as Record<string, (typeof operations)[keyof typeof operations]>)[
          op.operationId
        ];
        expect(
          entry && {
            method: entry.method,
            path: entry.path,
            security: [...entry.security].sort(),
            parameters: entry.parameters.map((p) => `${p.in} ${p.name}`),
          },
        ).toEqual({
          method: op.method,
          path: op.path,
          security: [...new Set(op.security.flatMap((req) => Object.keys(req)))].sort(),
          parameters: op.parameters.filter((p) => p.in !== 'cookie').map((p) => `${p.in} ${p.name}`),
        });
      });

      it.skipIf(!op.requiresAuth).each(BAD_CREDENTIALS)(
        'with %s answers 401 unauthenticated',
        async (_name, headers) => {
          const [input] = sampleInput(op);
          const res = await call(op, input!, headers);
          expect(checker.violations(op, res), show(res)).toEqual([]);
          expect([res.status, problemOf(res).code], show(res)).toEqual([401, 'unauthenticated']);
        },
      );

      it.skipIf(op.jsonBody === null)(
        'its request body schema closes every object (additionalProperties: false)',
        () => {
          expect(openObjectSchemas(op.jsonBody!, resolve)).toEqual([]);
        },
      );

      it.skipIf(op.jsonBody === null)(
        'an unknown body field gets 400 invalid-request naming it',
        async () => {
          const tried = new Set<string>();
          for (const input of sampleInput(op, true, 3)) {
            for (const { at, field } of closedObjectSlots(op.jsonBody!, input.body, resolve, matches)) {
              if (tried.has(at)) continue;
              tried.add(at);
              const res = await call(op, { ...input, body: withFieldAt(input.body, at, field, 1) });
              expect(checker.violations(op, res), show(res)).toEqual([]);
              // Without credentials a protected operation may refuse before it validates.
              if (op.requiresAuth && res.status === 401) continue;
              expect([res.status, problemOf(res).code], show(res)).toEqual([400, 'invalid-request']);
              expect(problemOf(res).errors, show(res)).toContainEqual(
                expect.objectContaining({ location: 'body', pointer: `${at}/${field}` }),
              );
            }
          }
          // A body with no object in it (a bare array of strings) has nowhere to put a field.
          if (samplesHoldObjects(op))
            expect(tried.size, 'no closed object to slip a field into').toBeGreaterThan(0);
        },
      );

      // Bodies that never reach schema validation: the body parser and the validator's media-type
      // check answer these, and they must answer like any other contract failure.
      const brokenBodies: [string, { given: Partial<OperationInput> }][] = [
        ...(op.requestBody?.required
          ? [
              ['no body at all', { given: { body: undefined } }] as [
                string,
                { given: Partial<OperationInput> },
              ],
            ]
          : []),
        ['a body that is not JSON', { given: { body: undefined, rawBody: '{"unterminated": ' } }],
      ];
      it.skipIf(op.jsonBody === null).each(brokenBodies)(
        '%s gets 400 invalid-request',
        async (_name, { given }) => {
          const [input] = sampleInput(op);
          const res = await call(op, { ...input!, ...given });
          expect(checker.violations(op, res), show(res)).toEqual([]);
          if (op.requiresAuth && res.status === 401) return;
          expect([res.status, problemOf(res).code], show(res)).toEqual([400, 'invalid-request']);
        },
      );

      it('valid inputs never answer 5xx or an undocumented status', async () => {
        // Public operations first get one field at a time filled with hostile characters only.
        const examples = op.requiresAuth ? [] : hostileInputs(op, resolve);
        await checkProperty(op, validInput(op, resolve), examples, async (input) => {
          const res = await call(op, input);
          const problems = checker.violations(op, res);
          if (res.status >= 500) problems.push(`answered ${show(res)}`);
          // Refusing a spec-valid request as `invalid-request` means server and spec disagree.
          if (!op.requiresAuth && res.status === 400 && problemOf(res).code === 'invalid-request') {
            problems.push(`a valid request was refused: ${show(res)}`);
          }
          expect(problems).toEqual([]);
        });
      });

      it('invalid inputs get 400 invalid-request', async () => {
        const cases = invalidCasesFor(op);
        // Public operations try every broken rule once before the random runs: a bug that needs one
        // rule in particular (a wrong type in one field) must not depend on the seed.
        const examples = op.requiresAuth ? [] : cases.map((c) => fc.sample(c, { numRuns: 1, seed: 7 })[0]!);
        await checkProperty(op, fc.oneof(...cases), examples, async ({ location, reason, input }) => {
          const res = await call(op, input);
          const problems = checker.violations(op, res);
          if (res.status >= 500) problems.push(`answered ${show(res)}`);
          // Without credentials a protected operation may answer 401 first; the checks above cover it.
          if (!op.requiresAuth) {
            const { code, errors } = problemOf(res);
            if (res.status !== 400 || code !== contractCode(op, errors)) {
              problems.push(`want 400 invalid-request, got ${show(res)}`);
            } else if (errors && !errors.some((e) => e.location === location)) {
              problems.push(`no errors[] entry in ${location}: ${show(res)}`);
            }
          }
          expect(problems, reason).toEqual([]);
        });
      });
    });
  }

  // Secured operations again, signed in: past authentication the same rules hold.
  for (const op of ops.filter((o) => o.requiresAuth && inShard(shard, shards)(o))) {
    describe(`${op.operationId} signed in`, () => {
      it('valid inputs never answer 5xx, an undocumented status or invalid-request', async () => {
        await checkProperty(op, validInput(op, resolve), hostileInputs(op, resolve), async (input) => {
          const res = await call(op, input, signedIn);
          const problems = checker.violations(op, res);
          if (res.status >= 500) problems.push(`answered ${show(res)}`);
          if (res.status === 401) problems.push(`the session was refused: ${show(res)}`);
          if (res.status === 400 && problemOf(res).code === 'invalid-request') {
            problems.push(`a valid request was refused: ${show(res)}`);
          }
          expect(problems).toEqual([]);
        });
      });

      it('invalid inputs get 400 invalid-request', async () => {
        const cases = invalidCasesFor(op);
        if (cases.length === 0) return;
        const examples = cases.map((c) => fc.sample(c, { numRuns: 1, seed: 7 })[0]!);
        await checkProperty(op, fc.oneof(...cases), examples, async ({ location, reason, input }) => {
          const res = await call(op, input, signedIn);
          const problems = checker.violations(op, res);
          const { code, errors } = problemOf(res);
          if (res.status !== 400 || code !== contractCode(op, errors)) {
            problems.push(`want 400 ${contractCode(op, errors)}, got ${show(res)}`);
          } else if (errors && !errors.some((e) => e.location === location)) {
            problems.push(`no errors[] entry in ${location}: ${show(res)}`);
          }
          expect(problems, reason).toEqual([]);
        });
      });
    });
  }

  if (shard === 0)
    describe('requests outside the spec', () => {
      const paths = [...new Set(ops.map((o) => o.path))];
      // A concrete URL for a path template, with parameters from its first operation.
      const concrete = (template: string) => {
        const op = ops.find((o) => o.path === template)!;
        return toRequest(apiBase(), op, sampleInput(op)[0]!).url.split('?')[0]!;
      };

      const unknownRoutes: [string, { given: () => string }][] = [
        ['an unknown path', { given: () => `${apiBase()}/zz-no-such-route` }],
        [
          'an unknown path under a known prefix',
          { given: () => `${apiBase()}${paths[0]!.replace(/\/[^/]*$/, '')}/zz-no-such-route` },
        ],
        ['a known path with an extra segment', { given: () => `${concrete(paths[0]!)}/zz-extra` }],
      ];
      it.each(unknownRoutes)('%s answers 404 not-found', async (_name, { given }) => {
        const res = await receive(await fetch(given()));
        expect(checker.violations(null, res), show(res)).toEqual([]);
        expect([res.status, problemOf(res).code], show(res)).toEqual([404, 'not-found']);
      });

      it.each(paths)('%s: a method it does not define answers 405 with Allow', async (template) => {
        const defined = ops.filter((o) => o.path === template).map((o) => o.method.toUpperCase());
        const wrong = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'].filter((m) => !defined.includes(m));
        for (const method of wrong) {
          const res = await receive(await fetch(concrete(template), { method }));
          expect(checker.violations(null, res), method).toEqual([]);
          expect([res.status, problemOf(res).code], `${method} ${show(res)}`).toEqual([
            405,
            'method-not-allowed',
          ]);
          // RFC 9110 §15.5.6: a 405 lists the methods the resource does support.
          const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase());
          expect(allow, `${method} Allow`).toEqual(expect.arrayContaining(defined));
        }
      });
    });
}
