// Format sniffing and header dimensions, against images sharp writes and bytes that only look alike.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { headerDimensions, sniffFormat, type ImageFormat } from './format.js';

const W = 37;
const H = 23;
const base = () => sharp({ create: { width: W, height: H, channels: 3, background: '#336699' } });
const withAlpha = () => sharp({ create: { width: W, height: H, channels: 4, background: '#33669980' } });

describe('sniffFormat and headerDimensions of real images', () => {
  it.each<[string, { make: () => Promise<Buffer>; format: ImageFormat }]>([
    ['baseline JPEG', { make: () => base().jpeg().toBuffer(), format: 'jpeg' }],
    [
      'progressive JPEG with EXIF',
      {
        make: () => base().jpeg({ progressive: true }).withMetadata({ orientation: 6 }).toBuffer(),
        format: 'jpeg',
      },
    ],
    ['PNG', { make: () => base().png().toBuffer(), format: 'png' }],
    ['GIF', { make: () => base().gif().toBuffer(), format: 'gif' }],
    ['lossy WebP (VP8)', { make: () => base().webp().toBuffer(), format: 'webp' }],
    ['lossless WebP (VP8L)', { make: () => base().webp({ lossless: true }).toBuffer(), format: 'webp' }],
    ['WebP with alpha (VP8X)', { make: () => withAlpha().webp().toBuffer(), format: 'webp' }],
  ])('%s', async (_name, { make, format }) => {
    const bytes = await make();
    expect(sniffFormat(bytes)).toBe(format);
    expect(headerDimensions(bytes, format)).toEqual({ width: W, height: H });
  });
});

describe('sniffFormat of what is not one of the four', () => {
  it.each<[string, Buffer]>([
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['HTML', Buffer.from('<!doctype html><p>hi')],
    ['PDF', Buffer.from('%PDF-1.7\n')],
    ['ICO', Buffer.from([0, 0, 1, 0, 1, 0])],
    ['BMP', Buffer.from('BM\0\0\0\0')],
    ['TIFF', Buffer.from([0x49, 0x49, 0x2a, 0])],
    ['AVIF', Buffer.concat([Buffer.from([0, 0, 0, 0x1c]), Buffer.from('ftypavif')])],
    ['a RIFF that is not WebP (WAV)', Buffer.from('RIFF\0\0\0\0WAVEfmt ')],
    ['empty', Buffer.alloc(0)],
    ['two bytes of a JPEG', Buffer.from([0xff, 0xd8])],
  ])('%s is null', (_name, bytes) => {
    expect(sniffFormat(bytes)).toBeNull();
  });
});

describe('headerDimensions of damaged headers', () => {
  it.each<[string, { bytes: Buffer; format: ImageFormat }]>([
    [
      'a PNG signature alone',
      { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), format: 'png' },
    ],
    [
      'a JPEG that starts its scan before any frame',
      { bytes: Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 4, 0, 0]), format: 'jpeg' },
    ],
    [
      'a JPEG with a segment length below 2',
      { bytes: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 1, 0, 0]), format: 'jpeg' },
    ],
    [
      'a JPEG cut inside its frame header',
      { bytes: Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, 0]), format: 'jpeg' },
    ],
    [
      'a GIF without an image',
      {
        bytes: Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x3b])]),
        format: 'gif',
      },
    ],
    [
      'a WebP with an unknown first chunk',
      { bytes: Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPXXXX'), Buffer.alloc(20)]), format: 'webp' },
    ],
  ])('%s is null', (_name, { bytes, format }) => {
    expect(headerDimensions(bytes, format)).toBeNull();
  });

  it('reads the 400-megapixel claim of a PNG header without anything after it', () => {
    const header = Buffer.alloc(24);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header);
    header.write('IHDR', 12, 'latin1');
    header.writeUInt32BE(20_000, 16);
    header.writeUInt32BE(20_000, 20);
    expect(headerDimensions(header, 'png')).toEqual({ width: 20_000, height: 20_000 });
  });

  it('lets a GIF frame that reaches past the logical screen grow it', () => {
    // Logical screen 1×1, no colour table, then an image descriptor at (10, 20) of 60000×50000.
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x2c;
    descriptor.writeUInt16LE(10, 1);
    descriptor.writeUInt16LE(20, 3);
    descriptor.writeUInt16LE(60_000, 5);
    descriptor.writeUInt16LE(50_000, 7);
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0, 0, 0]), descriptor]);
    expect(headerDimensions(gif, 'gif')).toEqual({ width: 60_010, height: 50_020 });
  });
});
