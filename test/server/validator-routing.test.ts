// The validator's route lookup as patched (patches/express-openapi-validator+5.6.2.patch: matchers
// built once, candidates found in a tree of the routes' segments) finds exactly the route that the
// stock lookup finds: the first route, in the validator's own order, whose matcher accepts the path.
import { createRequire } from 'node:module';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bundledSpec } from '../../server/src/spec.js';

const require = createRequire(import.meta.url);
// The matcher library the validator itself loads, called as it calls it.
const { pathToRegexp } = createRequire(require.resolve('express-openapi-validator'))('path-to-regexp') as {
  pathToRegexp: (path: string, options: { sensitive: boolean; strict: boolean }) => { regexp: RegExp };
};
const { OpenApiSpecLoader } = require('express-openapi-validator/dist/framework/openapi.spec.loader.js') as {
  OpenApiSpecLoader: new (opts: object) => { load(): Promise<unknown> };
};
const { OpenApiContext } = require('express-openapi-validator/dist/framework/openapi.context.js') as {
  OpenApiContext: new (spec: unknown, ignorePaths: undefined, ignoreUndocumented: boolean, useRequestUrl: boolean) => {
    routes: { expressRoute: string; openApiRoute: string }[];
  };
};
const { applyOpenApiMetadata } = require('express-openapi-validator/dist/middlewares/openapi.metadata.js') as {
  applyOpenApiMetadata: (context: unknown, responseApiDoc: unknown) => (req: object, res: object, next: () => void) => void;
};

const operation = { responses: { '204': { description: 'done' } } };
// The API's own paths, plus paths whose area (the segment after /api/v2) is a parameter or shares a
// prefix with another area, so that every kind of candidate list is exercised.
// Segments that mix a parameter with text are tried apart from the tree, overlapping tree routes.
const extraPaths = [
  '/{area}',
  '/{area}/things',
  '/{area}/things/{id}',
  '/public-ish/x',
  '/me/{what}',
  '/publicx',
  '/a.b~c/d',
  '/files/{name}',
  '/files/{name}.txt',
  '/files/readme.txt',
  '/v{version}/things',
];
const spec = structuredClone(bundledSpec) as { paths: Record<string, object> };
for (const path of extraPaths) spec.paths[path] = { get: operation };

const loaded = await new OpenApiSpecLoader({ apiDoc: spec, validateApiSpec: false, $refParser: { mode: 'bundle' } }).load();
const context = new OpenApiContext(loaded, undefined, false, false);
const metadata = applyOpenApiMetadata(context, undefined);

// The stock lookup: every route in the validator's order, its matcher built for this request.
const order = [...new Map(context.routes.map((r) => [r.expressRoute, r.openApiRoute])).entries()];
function reference(path: string): string | null {
  for (const [expressRoute, openApiRoute] of order) {
    if (pathToRegexp(expressRoute, { sensitive: false, strict: false }).regexp.exec(path)) return openApiRoute;
  }
  return null;
}

/** The matched route, or the status the lookup refused the request with, or null (not the API's). */
function lookup(path: string, method: string): string | number | null {
  const req: { path: string; baseUrl: string; originalUrl: string; url: string; method: string; app: object; openapi?: { openApiRoute: string } } = {
    path,
    baseUrl: '',
    originalUrl: path,
    url: path,
    method,
    app: { enabled: () => false },
  };
  try {
    metadata(req, {}, () => {});
  } catch (err) {
    return (err as { status: number }).status;
  }
  return req.openapi?.openApiRoute ?? null;
}

/** What the stock lookup makes of `path`, asked with a method its route has. */
function expectSameAsStock(path: string): void {
  const route = reference(path);
  if (route === null) {
    // No route: 404 or not the API's business (the lookup's caller decides, as it did unpatched).
    expect([404, null], path).toContain(lookup(path, 'GET'));
    return;
  }
  const method = Object.keys(spec.paths[route.slice('/api/v2'.length)]!)[0]!.toUpperCase();
  let decodes = true;
  try {
    decodeURIComponent(path);
  } catch {
    decodes = false;
  }
  // A matched path whose parameters do not decode is refused with 400.
  expect(lookup(path, method), `${method} ${path}`).toBe(decodes ? route : 400);
}

const templates = order.map(([expressRoute]) => expressRoute);
const segment = fc.stringMatching(/^(?:[A-Za-z0-9._~-]|%[0-9A-F]{2}|[ſKé])+$/, { size: 'small' });
const flipCase = (s: string, flips: boolean[]) =>
  [...s].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');

describe('patched route lookup', () => {
  it('finds the route of every template, whatever the case and a trailing slash', () => {
    for (const template of templates) {
      const path = template.replace(/:[A-Za-z_]+/g, 'x1');
      expect(reference(path)).not.toBeNull();
      for (const variant of [path, `${path}/`, path.toUpperCase(), path.toLowerCase()]) expectSameAsStock(variant);
    }
  });

  it('agrees with the stock lookup on generated paths', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...templates),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('', '/', '//'),
        fc.nat({ max: 3 }),
        (template, fillers, flips, tail, mangle) => {
          let i = 0;
          let path = template.replace(/:[A-Za-z_]+/g, () => fillers[i++ % fillers.length]!);
          if (mangle === 1) path = flipCase(path, flips);
          if (mangle === 2) path = path.split('/').slice(0, 1 + fillers.length).join('/');
          if (mangle === 3) path = `/api/v2/${fillers.join('/')}`;
          expectSameAsStock(path + tail);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
