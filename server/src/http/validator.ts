// express-openapi-validator checks every request against the bundled spec before a handler runs,
// and (in development and tests) every response. Security is ours, not the validator's.
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types.js';

export function openApiValidator(spec: object, validateResponses: boolean): RequestHandler[] {
  return OpenApiValidator.middleware({
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
}
