// The scaling check's spec: the bundled spec plus SYNTHETIC_OPERATIONS GET operations of the shape a
// grown API has (a path parameter, a query parameter, a $ref'd JSON response), so that the route a
// request hits sits early or late in the validator's route scan.

export const SYNTHETIC_OPERATIONS = 150;
export const SYNTHETIC_AREA_PATTERN = '^area[0-9]{3}$';

const area = (n: number) => `area${String(n).padStart(3, '0')}`;

/** The OpenAPI path of synthetic operation `n` (0-based). */
export const syntheticPath = (n: number): string => `/bench/${area(n)}/{id}/things`;

/** A request URL for synthetic operation `n`, under the spec's server base path. */
export const syntheticUrl = (n: number, id = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f'): string =>
  `/api/v2/bench/${area(n)}/${id}/things?limit=10`;

/** What every synthetic operation answers (one handler serves them all, see server.ts). */
export function syntheticBody(areaName: string, ownerId: string) {
  return {
    area: areaName,
    owner_id: ownerId,
    things: [
      {
        id: 'a3b9a7e2-6f1d-4c55-9a0e-1c2d3e4f5a6b',
        name: 'first thing',
        created_at: '2026-11-01T10:00:00.000Z',
        size: 1,
      },
      {
        id: 'b4c0b8f3-7a2e-4d66-8b1f-2d3e4f5a6b7c',
        name: 'second thing',
        created_at: '2026-11-02T11:30:00.000Z',
        size: 2,
      },
      {
        id: 'c5d1c9a4-8b3f-4e77-9c2a-3e4f5a6b7c8d',
        name: 'third thing',
        created_at: '2026-11-03T12:45:00.000Z',
        size: 3,
      },
    ],
  };
}

type Json = Record<string, unknown>;

export function inflateSpec(bundled: Json, count = SYNTHETIC_OPERATIONS): Json {
  const spec = structuredClone(bundled) as Json & {
    paths: Json;
    components: Json & { schemas: Json; parameters: Json };
  };
  spec.components.parameters.BenchOwnerId = {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The owner of the things.',
    schema: { type: 'string', format: 'uuid' },
  };
  spec.components.schemas.BenchThing = {
    type: 'object',
    required: ['id', 'name', 'created_at', 'size'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string', minLength: 1, maxLength: 100 },
      created_at: { type: 'string', format: 'date-time' },
      size: { type: 'integer', minimum: 0 },
    },
  };
  spec.components.schemas.BenchThingPage = {
    type: 'object',
    required: ['area', 'owner_id', 'things'],
    properties: {
      area: { type: 'string', pattern: SYNTHETIC_AREA_PATTERN },
      owner_id: { type: 'string', format: 'uuid' },
      things: { type: 'array', items: { $ref: '#/components/schemas/BenchThing' } },
    },
  };
  for (let n = 0; n < count; n++) {
    spec.paths[syntheticPath(n)] = {
      get: {
        operationId: `bench${area(n)}ThingsList`,
        tags: ['bench'],
        summary: `List the things of ${area(n)}`,
        security: [],
        'x-callers': ['anonymous'],
        'x-capability': null,
        parameters: [
          { $ref: '#/components/parameters/BenchOwnerId' },
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 100 },
          },
        ],
        responses: {
          '200': {
            description: 'The things.',
            headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/BenchThingPage' } } },
          },
          '400': { $ref: '#/components/responses/BadRequest' },
          '500': { $ref: '#/components/responses/InternalError' },
        },
      },
    };
  }
  return spec;
}
