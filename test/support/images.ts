// Real images made with sharp (and one made by hand: the decompression bomb), and a raw multipart
// upload through fetch + FormData, for the avatar and asset tests and the image-bomb benchmark.
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

export const RED = { r: 255, g: 0, b: 0 };
export const BLUE = { r: 0, g: 0, b: 255 };

const solid = (width: number, height: number, background: { r: number; g: number; b: number }) =>
  sharp({ create: { width, height, channels: 3, background } });

/** 40×20, left half red, right half blue: its orientation shows in which way the colours split. */
export async function twoColour(): Promise<ReturnType<typeof sharp>> {
  const left = await solid(20, 20, RED).png().toBuffer();
  return solid(40, 20, BLUE).composite([{ input: left, left: 0, top: 0 }]);
}

/**
 * The 40×20 red|blue image as a JPEG whose EXIF says orientation 6 ("rotate 90° clockwise to show"):
 * shown upright it is 20×40, red on top, blue below. It carries an ICC profile and XMP too.
 */
export async function jpegOrientation6(): Promise<Buffer> {
  return (await twoColour())
    .jpeg({ quality: 95 })
    .withExif({ IFD0: { Copyright: 'exif-marker' } })
    .withMetadata({ orientation: 6 })
    .withIccProfile('p3')
    .withXmp(
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>',
    )
    .toBuffer();
}

export const png = (width = 64, height = 48) => solid(width, height, RED).png().toBuffer();
export const webp = (width = 64, height = 48) =>
  solid(width, height, BLUE).webp({ lossless: true }).toBuffer();

/** Two frames, red then blue, as a GIF or a WebP: only the red one may come out. */
export async function animated(format: 'gif' | 'webp'): Promise<Buffer> {
  const frames = await Promise.all([RED, BLUE].map((c) => solid(30, 30, c).png().toBuffer()));
  const joined = sharp(frames, { join: { animated: true } });
  return (
    format === 'gif'
      ? joined.gif({ delay: [100, 100], loop: 0 })
      : joined.webp({ delay: [100, 100], loop: 0 })
  ).toBuffer();
}

/** A noisy JPEG cut off part way through its scan data (its header is whole). */
export async function truncatedJpeg(): Promise<Buffer> {
  const full = await sharp(randomBytes(300 * 200 * 3), { raw: { width: 300, height: 200, channels: 3 } })
    .jpeg()
    .toBuffer();
  return full.subarray(0, Math.floor(full.length * 0.6));
}

export const SVG = Buffer.from(
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
);
export const HTML = Buffer.from(
  '<!doctype html><html><body><script>alert(document.cookie)</script></body></html>',
);
export const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A complete, valid 1-bit greyscale PNG of `side`×`side` pixels, all black: for 20000 that is 400
 * megapixels (gigabytes once decoded) in a few dozen KB, since deflate squeezes the zero rows ~1000:1.
 */
export function pngBomb(side = 20_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  // Each row: filter byte 0, then side/8 bytes of zero bits.
  const raw = Buffer.alloc(side * (1 + Math.ceil(side / 8)));
  const idat = deflateSync(raw, { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The RGB of the pixel at (x, y) of an image. */
export async function pixel(image: Buffer, x: number, y: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}

/** Whether an RGB colour is close to another (lossy WebP moves colours a little). */
export const near = (got: readonly number[], want: { r: number; g: number; b: number }, tolerance = 40) =>
  Math.abs(got[0]! - want.r) <= tolerance &&
  Math.abs(got[1]! - want.g) <= tolerance &&
  Math.abs(got[2]! - want.b) <= tolerance;

/** PUT /me/avatar with `form` through plain fetch (the body the SDK will send). */
export function putAvatar(baseUrl: string, token: string, form: FormData): Promise<Response> {
  return fetch(`${baseUrl}/api/v2/me/avatar`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
}

/** A form with one part `file` holding `bytes` under `filename` and `type`. */
export function fileForm(
  bytes: Uint8Array,
  filename = 'avatar.png',
  type = 'image/png',
  name = 'file',
): FormData {
  const form = new FormData();
  // (A copy: Blob takes only views of a plain ArrayBuffer.)
  form.append(name, new Blob([new Uint8Array(bytes)], { type }), filename);
  return form;
}
