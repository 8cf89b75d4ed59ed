// Compile-time guarantees of the generated methods: exact params, optional-when-empty arguments,
// result types from the index. Checked by vitest's typecheck (a failing assertion fails the run).
import { describe, expectTypeOf, test } from 'vitest';
import {
  createClient,
  createSessionClient,
  operations,
  type BinaryBody,
  type components,
  type OperationId,
  type OperationParams,
  type SvcApiError,
  type SvcClientCore,
  isSvcApiError,
} from '../src/index.js';

type Schemas = components['schemas'];
const client = createClient({ baseUrl: 'http://127.0.0.1:1' });

describe('generated methods', () => {
  test('there is one method per operation and none shadows the core API', () => {
    expectTypeOf(client).toHaveProperty('publicCapabilitiesGet');
    expectTypeOf(client).toHaveProperty('publicAssetGet');
    expectTypeOf<Extract<OperationId, keyof SvcClientCore>>().toBeNever();
  });

  test('results come from the success response of the spec', () => {
    expectTypeOf(client.publicCapabilitiesGet()).resolves.toEqualTypeOf<Schemas['DeploymentCapabilities']>();
    expectTypeOf(client.publicIncidentsList()).resolves.toEqualTypeOf<Schemas['PublicIncident'][]>();
    expectTypeOf(client.publicCaptchaConfigGet({ path: { hostname: 'a.example' } })).resolves.toEqualTypeOf<
      Schemas['PublicCaptchaConfig']
    >();
    expectTypeOf(
      client.publicClientErrorsCreate({ body: { error_id: 'e', message: 'm' } }),
    ).resolves.toEqualTypeOf<undefined>();
    expectTypeOf(client.publicAssetGet({ path: { id: 'x' } })).resolves.toEqualTypeOf<BinaryBody>();
  });

  test('the argument is optional exactly when nothing in it is required', () => {
    expectTypeOf(client.publicIncidentsList)
      .parameter(0)
      .toEqualTypeOf<{ headers?: Record<string, string> } | undefined>();
    // @ts-expect-error hostname is a required path parameter
    void client.publicCaptchaConfigGet();
    // @ts-expect-error the path section is required
    void client.publicCaptchaConfigGet({});
    // @ts-expect-error hostname is missing from path
    void client.publicResellerByHostGet({ path: {} });
    // @ts-expect-error the body is required
    void client.publicClientErrorsCreate();
  });

  test('params are exact', () => {
    expectTypeOf<OperationParams<'publicClientErrorsCreate'>>().toEqualTypeOf<{
      body: Schemas['ClientErrorReport'];
      headers?: Record<string, string>;
    }>();
    expectTypeOf<OperationParams<'publicAssetGet'>>().toEqualTypeOf<{
      header?: { 'If-None-Match'?: string };
      path: { id: string };
      headers?: Record<string, string>;
    }>();
    // @ts-expect-error `severity` is not a field of ClientErrorReport
    void client.publicClientErrorsCreate({ body: { error_id: 'e', message: 'm', severity: 'high' } });
    // @ts-expect-error message is required
    void client.publicClientErrorsCreate({ body: { error_id: 'e' } });
    // @ts-expect-error the wrong type for a field
    void client.publicClientErrorsCreate({ body: { error_id: 1, message: 'm' } });
    // @ts-expect-error an operation without parameters takes no path
    void client.publicIncidentsList({ path: { id: 'x' } });
    // @ts-expect-error an unknown path parameter
    void client.publicAssetGet({ path: { id: 'x', other: 'y' } });
    // @ts-expect-error an operation without a body takes none
    void client.publicCapabilitiesGet({ body: {} });
  });

  test('per-call options', () => {
    void client.publicIncidentsList(undefined, {
      timeoutMs: 1000,
      retries: 0,
      signal: AbortSignal.timeout(5),
    });
    // @ts-expect-error unknown option
    void client.publicIncidentsList(undefined, { retry: 3 });
  });
});

describe('client.request', () => {
  test('a literal id gets the same exact types', () => {
    expectTypeOf(client.request('publicIncidentsList')).resolves.toEqualTypeOf<Schemas['PublicIncident'][]>();
    expectTypeOf(
      client.request('publicCaptchaConfigGet', { path: { hostname: 'h' } }),
    ).resolves.toEqualTypeOf<Schemas['PublicCaptchaConfig']>();
    // @ts-expect-error an unknown body field does not fall through to the loose overload
    void client.request('publicClientErrorsCreate', { body: { error_id: 'e', message: 'm', nope: 1 } });
    // @ts-expect-error a missing path parameter does not fall through either
    void client.request('publicCaptchaConfigGet', { path: {} });
    // @ts-expect-error an unknown literal id
    void client.request('publicNothingGet');
  });

  test('a runtime id takes loose params and resolves to unknown', () => {
    const fromFlags: string = 'publicCaptchaConfigGet';
    expectTypeOf(
      client.request(fromFlags, {
        path: { hostname: 'h' },
        query: { page: 1 },
        body: { x: 1 },
        headers: { 'X-A': 'b' },
      }),
    ).resolves.toBeUnknown();
    // svcctl walks the index: its ids are the OperationId union.
    for (const entry of Object.values(operations)) {
      expectTypeOf(client.request(entry.operationId, { path: {} })).resolves.toBeUnknown();
    }
  });
});

describe('uploadAvatar', () => {
  test('takes a Blob, a File, a Buffer or a Uint8Array, and resolves to the identity', () => {
    const session = createSessionClient({ baseUrl: 'http://127.0.0.1:1' });
    expectTypeOf(client.uploadAvatar(new Uint8Array(1))).resolves.toEqualTypeOf<Schemas['Me']>();
    expectTypeOf(session.uploadAvatar(new Blob([]), { filename: 'a.png' })).resolves.toEqualTypeOf<
      Schemas['Me']
    >();
    void client.uploadAvatar(Buffer.from('x'));
    void client.uploadAvatar(new File([], 'me.png'), { timeoutMs: 60_000 });
    // @ts-expect-error a path is not a file: read it first
    void client.uploadAvatar('me.png');
  });
});

describe('errors', () => {
  test('the guard narrows', () => {
    const e: unknown = null;
    if (isSvcApiError(e, 'not-found')) {
      expectTypeOf(e).toEqualTypeOf<SvcApiError>();
      expectTypeOf(e.retryAfter).toEqualTypeOf<number | null>();
      expectTypeOf(e.errors).toEqualTypeOf<readonly Schemas['ValidationIssue'][]>();
    }
  });
});
