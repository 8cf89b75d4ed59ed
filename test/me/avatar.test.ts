// PUT/DELETE /me/avatar and PUT /me/avatar/source (seed document 1, "Identity": "Avatar upload"),
// through the real stack with real images. Uploads go through plain fetch + FormData.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import {
  BLUE,
  HTML,
  PDF,
  RED,
  SVG,
  animated,
  fileForm,
  jpegOrientation6,
  near,
  pixel,
  png,
  pngBomb,
  putAvatar,
  truncatedJpeg,
  webp,
} from '../support/images.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

interface Caller {
  api: SvcClient;
  token: string;
  refreshToken: string;
  userId: string;
}

async function signedIn(tag: string): Promise<Caller> {
  const { session } = await newAccount(app, smtp, tag);
  return {
    api: createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 }),
    token: session.token,
    refreshToken: session.refresh_token,
    userId: session.user.id,
  };
}

interface Me {
  avatar_asset_id: string | null;
}
interface Problem {
  status: number;
  code: string;
  detail: string;
}

const avatarRow = async (userId: string) => {
  const [r] = await app.sql<{ avatar_asset_id: string | null; avatar_source: string | null }[]>`
    select avatar_asset_id, avatar_source from users where id = ${userId}`;
  return r!;
};
const assetRow = async (id: string) => {
  const [r] = await app.sql<{ kind: string; content_type: string; bytes: Buffer; etag: string }[]>`
    select kind, content_type, bytes, etag from assets where id = ${id}`;
  return r;
};
const avatarAssetCount = async () => {
  const [r] = await app.sql<{ n: number }[]>`select count(*)::int as n from assets where kind = 'avatar'`;
  return r!.n;
};

async function uploaded(
  caller: Caller,
  bytes: Buffer,
  filename = 'avatar.png',
  type = 'image/png',
): Promise<Me> {
  const res = await putAvatar(app.baseUrl, caller.token, fileForm(bytes, filename, type));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Me;
}

async function refused(res: Response): Promise<[number, string]> {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Problem;
  return [res.status, body.code];
}

describe('PUT /me/avatar', () => {
  it('stores a 512×512 lossy WebP turned upright by its EXIF orientation, with no EXIF, ICC or XMP left', async () => {
    const caller = await signedIn('avatar-jpeg');
    const input = await jpegOrientation6();
    const inMeta = await sharp(input).metadata();
    expect([
      inMeta.width,
      inMeta.height,
      inMeta.orientation,
      !!inMeta.exif,
      !!inMeta.icc,
      !!inMeta.xmp,
    ]).toEqual([40, 20, 6, true, true, true]);

    const me = await uploaded(caller, input, 'photo.jpg', 'image/jpeg');
    expect(me.avatar_asset_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await avatarRow(caller.userId)).toEqual({
      avatar_asset_id: me.avatar_asset_id,
      avatar_source: 'uploaded',
    });
    const asset = (await assetRow(me.avatar_asset_id!))!;
    expect([asset.kind, asset.content_type]).toEqual(['avatar', 'image/webp']);

    const out = await sharp(asset.bytes).metadata();
    expect([out.format, out.width, out.height]).toEqual(['webp', 512, 512]);
    expect([out.exif, out.icc, out.xmp, out.orientation]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    // Upright the input is 20×40, red above blue; covering the square keeps its middle, so the top of the
    // output is red and the bottom blue. Unrotated, it would be red on the left and blue on the right.
    const corners = await Promise.all([
      pixel(asset.bytes, 20, 20),
      pixel(asset.bytes, 490, 20),
      pixel(asset.bytes, 20, 490),
      pixel(asset.bytes, 490, 490),
    ]);
    expect(corners.map((p) => (near(p, RED) ? 'red' : near(p, BLUE) ? 'blue' : 'other'))).toEqual([
      'red',
      'red',
      'blue',
      'blue',
    ]);
  });

  it.each([
    ['PNG', () => png(64, 48), 'a.png', 'image/png'],
    ['WebP', () => webp(64, 48), 'a.webp', 'image/webp'],
    // The declared type and the name count for nothing: the bytes do.
    ['PNG sent as text/plain named .txt', () => png(10, 10), 'notes.txt', 'text/plain'],
  ])('accepts a %s', async (_name, make, filename, type) => {
    const caller = await signedIn('avatar-kinds');
    const me = await uploaded(caller, await make(), filename, type);
    const out = await sharp((await assetRow(me.avatar_asset_id!))!.bytes).metadata();
    expect([out.format, out.width, out.height]).toEqual(['webp', 512, 512]);
  });

  it.each(['gif', 'webp'] as const)('keeps only the first frame of an animated %s', async (format) => {
    const caller = await signedIn('avatar-animated');
    const input = await animated(format);
    expect((await sharp(input, { pages: -1 }).metadata()).pages).toBe(2);
    const me = await uploaded(caller, input, `anim.${format}`, `image/${format}`);
    const stored = (await assetRow(me.avatar_asset_id!))!.bytes;
    const out = await sharp(stored, { pages: -1 }).metadata();
    expect([out.format, out.width, out.height, out.pages ?? 1]).toEqual(['webp', 512, 512, 1]);
    expect(near(await pixel(stored, 256, 256), RED)).toBe(true);
  });

  it('gives every upload a new asset id and deletes the replaced asset', async () => {
    const caller = await signedIn('avatar-replace');
    const first = await uploaded(caller, await png());
    const second = await uploaded(caller, await png());
    expect(second.avatar_asset_id).not.toBe(first.avatar_asset_id);
    expect(await assetRow(first.avatar_asset_id!)).toBeUndefined();
    expect(await assetRow(second.avatar_asset_id!)).toBeDefined();
    expect((await caller.api.meGet()).avatar_asset_id).toBe(second.avatar_asset_id);
  });

  describe('refusals leave the avatar as it was', () => {
    let caller: Caller;
    let current: string;
    beforeAll(async () => {
      caller = await signedIn('avatar-refusals');
      current = (await uploaded(caller, await png())).avatar_asset_id!;
    });

    const unchanged = async () => {
      expect(await avatarRow(caller.userId)).toEqual({ avatar_asset_id: current, avatar_source: 'uploaded' });
      expect(await assetRow(current)).toBeDefined();
    };

    it.each([
      ['SVG', SVG, 'a.svg', 'image/svg+xml'],
      ['HTML', HTML, 'a.png', 'image/png'],
      ['PDF renamed .png', PDF, 'scan.png', 'image/png'],
      [
        'ICO',
        Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 22, 0, 0, 0]),
        'a.ico',
        'image/x-icon',
      ],
      ['BMP', Buffer.from('BM' + '\0'.repeat(60)), 'a.bmp', 'image/bmp'],
      ['TIFF', Buffer.from([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0, 0, 0]), 'a.tif', 'image/tiff'],
      [
        'AVIF',
        Buffer.concat([Buffer.from([0, 0, 0, 0x1c]), Buffer.from('ftypavif'), Buffer.alloc(20)]),
        'a.avif',
        'image/avif',
      ],
    ])('refuses %s with 415 unsupported-media-type', async (_name, bytes, filename, type) => {
      const before = await avatarAssetCount();
      const res = await putAvatar(app.baseUrl, caller.token, fileForm(bytes, filename, type));
      expect(await refused(res)).toEqual([415, 'unsupported-media-type']);
      await unchanged();
      expect(await avatarAssetCount()).toBe(before);
    });

    it('refuses a 20000×20000 PNG of a few KB fast, before decoding it, with 400 invalid-field-value', async () => {
      const bomb = pngBomb(20_000);
      expect(bomb.length).toBeLessThan(64 * 1024);
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const res = await putAvatar(app.baseUrl, caller.token, fileForm(bomb, 'bomb.png'));
      const ms = performance.now() - started;
      const body = (await res.json()) as Problem;
      expect([res.status, body.code]).toEqual([400, 'invalid-field-value']);
      expect(body.detail).toMatch(/too large.*20000×20000/);
      // Safety bounds, not performance targets (scripts/bench/image-bomb.ts measures): decoding 400
      // megapixels would take seconds and gigabytes.
      expect(ms).toBeLessThan(2000);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
      await unchanged();
    });

    it('refuses a truncated JPEG with 400 invalid-field-value, logging the reason without the bytes', async () => {
      const res = await putAvatar(
        app.baseUrl,
        caller.token,
        fileForm(await truncatedJpeg(), 'cut.jpg', 'image/jpeg'),
      );
      const body = (await res.json()) as Problem & Record<string, unknown>;
      expect([res.status, body.code]).toEqual([400, 'invalid-field-value']);
      // The decoder's own words stay in the log.
      expect(JSON.stringify(body)).not.toMatch(/vips|jpeg image|premature/i);
      const line = app.logs.find((l) => l.msg === 'image refused by the decoder' && l.format === 'jpeg');
      expect(line).toMatchObject({ reason: expect.stringMatching(/premature end/i) });
      expect(Object.keys(line!).sort()).toEqual([
        'format',
        'level',
        'msg',
        'reason',
        'request_id',
        'size',
        'time',
      ]);
      await unchanged();
    });

    it('refuses a body over 10 MB with 413 payload-too-large', async () => {
      const big = Buffer.alloc(11 * 1024 * 1024, 0xab);
      const res = await putAvatar(app.baseUrl, caller.token, fileForm(big, 'big.png'));
      expect(await refused(res)).toEqual([413, 'payload-too-large']);
      await unchanged();
    });

    it('refuses a file one byte over 10 MB found while reading (the body declares less than the limit) with 413', async () => {
      const res = await putAvatar(
        app.baseUrl,
        caller.token,
        fileForm(Buffer.alloc(10 * 1024 * 1024 + 1, 0xab), 'big.png'),
      );
      expect(await refused(res)).toEqual([413, 'payload-too-large']);
      await unchanged();
    });

    it('refuses a chunked body whose file passes 10 MB with 413, without reading it to the end', async () => {
      // No Content-Length: the limit is met while streaming.
      const boundary = 'xbound';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      let sent = 0;
      const total = 64 * 1024 * 1024;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(head);
        },
        pull(controller) {
          if (sent >= total) {
            controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
            controller.close();
            return;
          }
          const piece = Buffer.alloc(256 * 1024, 0xcd);
          sent += piece.length;
          controller.enqueue(piece);
        },
      });
      const res = await fetch(`${app.baseUrl}/api/v2/me/avatar`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${caller.token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
        body,
        duplex: 'half',
      } as RequestInit).catch((err: unknown) => err);
      // undici never reads an answer before it has sent the whole body: when the server cuts the
      // connection it reports the reset instead of the 413 the server sent.
      if (res instanceof Response) expect(await refused(res)).toEqual([413, 'payload-too-large']);
      // The server stopped reading a little past the limit, far short of the 64 MB on offer.
      expect(sent).toBeLessThan(32 * 1024 * 1024);
      await unchanged();
    });

    it.each([
      ['no part at all', () => new FormData()],
      ['a text field instead of a file', () => textForm('file', 'hello')],
      ['the file under another name', () => fileForm(Buffer.from('x'), 'a.png', 'image/png', 'avatar')],
      ['two files', () => twoFiles()],
    ])('refuses %s with 400 invalid-request', async (_name, make) => {
      const res = await putAvatar(app.baseUrl, caller.token, make());
      expect(await refused(res)).toEqual([400, 'invalid-request']);
      await unchanged();
    });

    it('refuses a JSON body and a body with no boundary with 400 invalid-request', async () => {
      const json = await fetch(`${app.baseUrl}/api/v2/me/avatar`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json' },
        body: '{"file":"x"}',
      });
      expect(await refused(json)).toEqual([400, 'invalid-request']);
      const noBoundary = await fetch(`${app.baseUrl}/api/v2/me/avatar`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'multipart/form-data' },
        body: 'whatever',
      });
      expect(await refused(noBoundary)).toEqual([400, 'invalid-request']);
      await unchanged();
    });

    it('refuses an upload without credentials with 401 before reading it', async () => {
      const res = await fetch(`${app.baseUrl}/api/v2/me/avatar`, {
        method: 'PUT',
        body: fileForm(await png()),
      });
      expect(await refused(res)).toEqual([401, 'unauthenticated']);
      await unchanged();
    });
  });

  it('allows 10 uploads per 10 minutes per caller, then answers 429 rate-limited with Retry-After', async () => {
    const caller = await signedIn('avatar-limit');
    const image = await png(16, 16);
    let last = '';
    for (let i = 0; i < 10; i += 1) last = (await uploaded(caller, image)).avatar_asset_id!;
    const res = await putAvatar(app.baseUrl, caller.token, fileForm(image));
    expect(await refused(res)).toEqual([429, 'rate-limited']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await avatarRow(caller.userId)).avatar_asset_id).toBe(last);
    // Someone else is not held back by it.
    const other = await signedIn('avatar-limit-other');
    await uploaded(other, image);
    // Twenty minutes on (with a refreshed access token), the caller may upload again.
    app.clock.advance(20 * 60 * 1000);
    try {
      const anon = createClient({ baseUrl: app.baseUrl, retries: 0 });
      const { token } = await anon.authRefresh({ body: { refresh_token: caller.refreshToken } });
      await uploaded({ ...caller, token }, image);
    } finally {
      app.clock.advance(-20 * 60 * 1000);
    }
  });
});

describe('DELETE /me/avatar', () => {
  it('removes the avatar and its asset, and answers 204 again when there is none', async () => {
    const caller = await signedIn('avatar-delete');
    const me = await uploaded(caller, await png());
    expect(await outcome(caller.api.meAvatarDelete())).toBe('ok');
    expect(await avatarRow(caller.userId)).toEqual({ avatar_asset_id: null, avatar_source: null });
    expect(await assetRow(me.avatar_asset_id!)).toBeUndefined();
    expect((await caller.api.meGet()).avatar_asset_id).toBeNull();

    const again = await fetch(`${app.baseUrl}/api/v2/me/avatar`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${caller.token}` },
    });
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');
  });

  it('never deletes another kind of asset', async () => {
    const caller = await signedIn('avatar-kind-guard');
    const [icon] = await app.sql<{ id: string }[]>`
      insert into assets (id, kind, content_type, bytes, etag, created_at)
      values (gen_random_uuid(), 'organization_icon', 'image/webp', '\\x00'::bytea, '"x"', now()) returning id`;
    // A row pointing at a non-avatar asset (only possible by hand) must not take that asset with it.
    await app.sql`update users set avatar_asset_id = ${icon!.id} where id = ${caller.userId}`;
    expect(await outcome(caller.api.meAvatarDelete())).toBe('ok');
    expect(await assetRow(icon!.id)).toBeDefined();
  });
});

describe('PUT /me/avatar/source', () => {
  it('answers 422 avatar-source-unavailable while no provider is linked, and changes nothing', async () => {
    const caller = await signedIn('avatar-source');
    const me = await uploaded(caller, await png());
    expect(await outcome(caller.api.meAvatarSourceSet({ body: { provider_id: 'github' } }))).toEqual([
      422,
      'avatar-source-unavailable',
    ]);
    expect(await avatarRow(caller.userId)).toEqual({
      avatar_asset_id: me.avatar_asset_id,
      avatar_source: 'uploaded',
    });
  });
});

function textForm(name: string, value: string): FormData {
  const form = new FormData();
  form.append(name, value);
  return form;
}

/** Two file parts: refused while parsing, before any bytes are looked at. */
function twoFiles(): FormData {
  const form = fileForm(Buffer.from('first'));
  form.append('file', new Blob([Buffer.from('second')], { type: 'image/png' }), 'b.png');
  return form;
}
