// express-openapi-validator checks every request against the bundled spec before a handler runs,
// and (in development and tests) every response. Security is ours, not the validator's.
import * as OpenApiValidator from 'express-openapi-validator';
import type { Request, RequestHandler } from 'express';
import type { OpenAPIV3, OpenApiRequestMetadata } from 'express-openapi-validator/dist/framework/types.js';
import { prepareMultipart } from './multipart.js';

/** What the validator leaves on a request whose route it matched (the operation bind.ts runs). */
export type ValidatedRequest = Request & { openapi?: OpenApiRequestMetadata };

/**
 * The validator's middlewares, in order (route metadata: 404 for unknown routes under the base path
 * and 405 for other methods of a known one; request validation; response validation when asked), to
 * be run in one layer (series.ts).
 */
export function openApiValidator(spec: object, validateResponses: boolean): RequestHandler[] {
  // Compiling the spec's schemas costs about 0.7 s of CPU. A process that makes several apps from one
  // spec (the tests start one or more per file in each worker, the benches several) compiles it once:
  // the steps keep no state of their own app (bind.ts reads the path parameters from req.openapi, not
  // from the app.param hooks the first app gets).
  const bySpec = compiled.get(spec) ?? new Map<boolean, RequestHandler[]>();
  compiled.set(spec, bySpec);
  let steps = bySpec.get(validateResponses);
  if (!steps) bySpec.set(validateResponses, (steps = compile(spec, validateResponses)));
  return steps;
}

const compiled = new WeakMap<object, Map<boolean, RequestHandler[]>>();

function compile(spec: object, validateResponses: boolean): RequestHandler[] {
  const steps = OpenApiValidator.middleware({
    apiSpec: structuredClone(spec) as OpenAPIV3.DocumentV3_1,
    // No coercion: a JSON body's types are the client's to get right ("5" is not 5). The validator still
    // reads path, query and header values, which arrive as text, as their declared types.
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: false,
    // Uploads are parsed by the operation that takes them, not buffered for every route.
    fileUploader: false,
  }) as RequestHandler[];
  // Its steps: path parameters, route metadata, security, request check[, response check]. Uploads are
  // prepared where its own uploader would run, between the route metadata and the request check
  // (multipart.ts); the body itself is read after authentication (bind.ts).
  if (steps.length !== (validateResponses ? 5 : 4))
    throw new Error('express-openapi-validator returned an unexpected middleware list: see multipart.ts');
  steps.splice(3, 0, prepareMultipart);
  return steps;
}
