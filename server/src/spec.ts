import { readFileSync } from 'node:fs';

/** The bundled spec that `npm run gen` writes: what the server validates against and serves. */
export const bundledSpec = JSON.parse(
  readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
