// uploadAvatar: PUT /me/avatar as multipart/form-data with the one part `file`, from a Blob, a File, a
// Buffer or a Uint8Array, byte for byte; on the session client with its token, and sent again intact
// after a refresh. The real server's side is in cli/test/e2e/me.test.ts.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, createSessionClient, isSvcApiError } from '../src/index.js';

interface Upload {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const ME = {
  id: '0b9f0000-0000-4000-8000-000000000001',
  created_at: '2026-01-01T00:00:00.000Z',
  name: 'Ada',
  language: 'en',
  is_onboarded: true,
  chat_notifications_enabled: false,
  system_permissions: [],
  avatar_asset_id: '0b9f0000-0000-4000-8000-0000000000aa',
  billing_country_code: null,
  email: 'ada@example.test',
};

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
});

/** Records every request; `answer(n)` gives the status of the nth (1-based). */
async function avatarServer(answer: (n: number, req: Upload) => number = () => 200) {
  const seen: Upload[] = [];
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const upload = {
      method: req.method!,
      path: new URL(req.url!, 'http://x').pathname,
      headers: req.headers,
      body: Buffer.concat(chunks),
    };
    seen.push(upload);
    if (upload.path.endsWith('/auth/refresh')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: 'fresh', refresh_token: 'svc_rt_2', session_id: ME.id }));
      return;
    }
    const status = answer(seen.length, upload);
    if (status === 200) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ME));
    } else {
      res.writeHead(status, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 't', status, code: 'unauthenticated' }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The multipart body as the server would read it. */
async function partsOf(upload: Upload): Promise<FormData> {
  return new Response(new Uint8Array(upload.body), {
    headers: { 'content-type': upload.headers['content-type']! },
  }).formData();
}

const BYTES = Uint8Array.from({ length: 256 }, (_v, i) => i);

describe('uploadAvatar', () => {
  test.each([
    ['a Buffer', () => Buffer.from(BYTES), undefined, 'upload'],
    ['a Uint8Array, with a file name', () => BYTES.slice(), 'me.png', 'me.png'],
    ['a Blob', () => new Blob([BYTES], { type: 'image/png' }), undefined, 'upload'],
    ['a File, under its own name', () => new File([BYTES], 'portrait.webp'), undefined, 'portrait.webp'],
  ] as const)(
    'sends %s as the one part `file`, byte for byte',
    async (_what, file, filename, expectedName) => {
      const { baseUrl, seen } = await avatarServer();
      const client = createClient({ baseUrl, token: 'svc_pat_test' });
      const me = await client.uploadAvatar(file(), filename ? { filename } : undefined);
      expect(me).toEqual(ME);
      const [upload] = seen;
      expect(upload).toMatchObject({ method: 'PUT', path: '/api/v2/me/avatar' });
      expect(upload!.headers.authorization).toBe('Bearer svc_pat_test');
      expect(upload!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      const form = await partsOf(upload!);
      expect([...form.keys()]).toEqual(['file']);
      const part = form.get('file') as File;
      expect(part.name).toBe(expectedName);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(BYTES);
    },
  );

  test('throws the API problem, as the generated methods do', async () => {
    const { baseUrl } = await avatarServer(() => 415);
    const client = createClient({ baseUrl, retries: 0 });
    const err = await client.uploadAvatar(BYTES).catch((e: unknown) => e);
    expect(isSvcApiError(err)).toBe(true);
    expect(err).toMatchObject({ status: 415, operationId: 'meAvatarUpload' });
  });

  test('the session client sends its token, and after a refresh the same bytes again', async () => {
    const { baseUrl, seen } = await avatarServer((n) => (n === 1 ? 401 : 200));
    const client = createSessionClient({
      baseUrl,
      session: { token: 'stale', refreshToken: 'svc_rt_1', sessionId: ME.id },
      refreshAheadMs: false,
      retries: 0,
    });
    await expect(client.uploadAvatar(Buffer.from(BYTES), { filename: 'a.png' })).resolves.toEqual(ME);
    const uploads = seen.filter((s) => s.path.endsWith('/me/avatar'));
    expect(uploads.map((u) => u.headers.authorization)).toEqual(['Bearer stale', 'Bearer fresh']);
    for (const upload of uploads) {
      const part = (await partsOf(upload)).get('file') as File;
      expect(part.name).toBe('a.png');
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(BYTES);
    }
  });

  test('passes the request options on (an aborted signal)', async () => {
    const { baseUrl, seen } = await avatarServer();
    const client = createClient({ baseUrl });
    const controller = new AbortController();
    controller.abort(new Error('not now'));
    await expect(client.uploadAvatar(BYTES, { signal: controller.signal })).rejects.toThrow('not now');
    expect(seen).toHaveLength(0);
  });
});

describe('uploadOrganizationIcon', () => {
  const ORG = '0b9f0000-0000-4000-8000-0000000000cc';

  test('puts the one part `file` to the organization, on both clients', async () => {
    const { baseUrl, seen } = await avatarServer();
    const client = createClient({ baseUrl, token: 'svc_pat_test' });
    await client.uploadOrganizationIcon(ORG, Buffer.from(BYTES), { filename: 'icon.png' });
    const session = createSessionClient({
      baseUrl,
      session: { token: 'held', refreshToken: 'svc_rt_1', sessionId: ME.id },
      refreshAheadMs: false,
    });
    await session.uploadOrganizationIcon(ORG, new Blob([BYTES]));
    expect(seen.map((s) => [s.method, s.path, s.headers.authorization])).toEqual([
      ['PUT', `/api/v2/organizations/${ORG}/icon`, 'Bearer svc_pat_test'],
      ['PUT', `/api/v2/organizations/${ORG}/icon`, 'Bearer held'],
    ]);
    const names = [];
    for (const upload of seen) {
      const part = (await partsOf(upload)).get('file') as File;
      names.push(part.name);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(BYTES);
    }
    expect(names).toEqual(['icon.png', 'upload']);
  });
});
