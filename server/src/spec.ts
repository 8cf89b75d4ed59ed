import { readFileSync } from 'node:fs';

/** The bundled spec that `npm run gen` writes: what the server validates against and serves. */
export const bundledSpec = JSON.parse(
  readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

/** The API's base path, the spec's server URL (`/api/v2`): where the validator checks requests. */
export const API_BASE_PATH = (bundledSpec.servers as { url: string }[])[0]!.url;
