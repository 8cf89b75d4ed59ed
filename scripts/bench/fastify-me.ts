// `GET /api/v2/me` on Fastify 5, the framework a user could pick instead of this stack: Fastify's own
// schema handling (the Authorization header validated by a headers schema, compiled by Fastify's Ajv;
// the 200 answer serialised by fast-json-stringify from the bundled spec's `Me` schema, as Fastify does
// by default for a route with a response schema), around the same work as the full stack's meGet
// (scripts/bench/me-route.ts). Fastify's defaults otherwise: its own node:http server, request ids on,
// logger off.
import { fastify, type FastifyError, type FastifyInstance } from 'fastify';
import type { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import type { Sql } from '../../server/src/db/client.js';
import type { Clock } from '../../server/src/clock.js';
import { toMe } from '../../server/src/features/me/mappers.js';
/** The bare route reads a session's caller. */
const SESSION = { kind: 'session' } as const;
import { API_BASE_PATH, bundledSpec } from '../../server/src/spec.js';
import { findCaller, UNAUTHENTICATED } from './me-route.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A component schema of the bundled spec with its `#/components/schemas/...` references inlined. */
export function componentSchema(name: string): Json {
  const schemas = (bundledSpec.components as { schemas: Record<string, Json> }).schemas;
  const inline = (node: Json, seen: string[]): Json => {
    if (Array.isArray(node)) return node.map((n) => inline(n, seen));
    if (node === null || typeof node !== 'object') return node;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const target = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1];
      if (!target || !(target in schemas)) throw new Error(`cannot inline ${ref}`);
      if (seen.includes(target)) throw new Error(`recursive schema ${[...seen, target].join(' -> ')}`);
      return inline(schemas[target]!, [...seen, target]);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v, seen)]));
  };
  if (!(name in schemas)) throw new Error(`the bundled spec has no schema ${name}`);
  return inline(schemas[name]!, [name]);
}

// authenticate()'s pattern (/^Bearer +([A-Za-z0-9._~+/-]+=*)$/i), spelled without the i flag, which
// JSON Schema patterns do not have.
const AUTHORIZATION = '^[Bb][Ee][Aa][Rr][Ee][Rr] +[A-Za-z0-9._~+/-]+=*$';

export function fastifyMeApp(deps: { sql: Sql; keys: KeyRing; clock: Clock }): FastifyInstance {
  const { sql, keys, clock } = deps;
  const app = fastify();
  // A missing or malformed Authorization header is a 401, as the API answers it (Fastify's default is a 400).
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.validation && err.validationContext === 'headers') {
      void reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .type('application/problem+json')
        .send(UNAUTHENTICATED);
      return;
    }
    void reply.send(err);
  });
  app.get<{ Headers: { authorization: string } }>(
    `${API_BASE_PATH}/me`,
    {
      schema: {
        headers: {
          type: 'object',
          required: ['authorization'],
          properties: { authorization: { type: 'string', pattern: AUTHORIZATION } },
        },
        response: { 200: componentSchema('Me') },
      },
    },
    async (req, reply) => {
      // The schema let through "Bearer", one or more spaces, the token.
      const token = req.headers.authorization.slice('Bearer'.length).trimStart();
      const me = await findCaller(sql, keys, token, clock.now());
      if (!me) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .type('application/problem+json')
          .send(UNAUTHENTICATED);
      }
      return toMe(me, SESSION);
    },
  );
  return app;
}
