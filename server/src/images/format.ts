// What an uploaded image is, read from its first bytes only: the format by its magic number, and the
// pixel dimensions its header declares, so that an image too large to decode is refused before any
// decoder sees it. Neither the file name nor the declared Content-Type is ever consulted.

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif';

export interface Dimensions {
  width: number;
  height: number;
}

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0): boolean =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b);

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

const JPEG = [0xff, 0xd8, 0xff];
const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const GIF87 = ascii('GIF87a');
const GIF89 = ascii('GIF89a');
const RIFF = ascii('RIFF');
const WEBP = ascii('WEBP');

/**
 * The format by magic bytes; null for anything else (SVG, HTML, PDF, ICO, AVIF/HEIC, TIFF, BMP, ...),
 * whatever the file is called.
 */
export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  if (startsWith(bytes, JPEG)) return 'jpeg';
  if (startsWith(bytes, PNG)) return 'png';
  if (startsWith(bytes, GIF87) || startsWith(bytes, GIF89)) return 'gif';
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return 'webp';
  return null;
}

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
};

/**
 * The dimensions the header declares; null when the header cannot be read (the decoder then decides,
 * under its own pixel limit). Only bounds-checked reads of the first bytes: no decoding.
 */
export function headerDimensions(bytes: Uint8Array, format: ImageFormat): Dimensions | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case 'png':
      return pngDimensions(bytes, view);
    case 'gif':
      return gifDimensions(bytes, view);
    case 'webp':
      return webpDimensions(bytes, view);
    case 'jpeg':
      return jpegDimensions(bytes, view);
  }
}

// PNG: the IHDR chunk must come first (PNG spec §5.6): width and height as 32-bit big-endian.
function pngDimensions(bytes: Uint8Array, view: DataView): Dimensions | null {
  if (bytes.length < 24 || !startsWith(bytes, ascii('IHDR'), 12)) return null;
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

// GIF: the logical screen, then the first image descriptor, which decoders let grow the canvas.
function gifDimensions(bytes: Uint8Array, view: DataView): Dimensions | null {
  if (bytes.length < 13) return null;
  let width = view.getUint16(6, true);
  let height = view.getUint16(8, true);
  const flags = bytes[10]!;
  let i = 13 + (flags & 0x80 ? 3 * 2 ** ((flags & 0x07) + 1) : 0);
  while (i < bytes.length) {
    const block = bytes[i]!;
    if (block === 0x2c) {
      // Image descriptor: left, top, width, height.
      if (i + 9 > bytes.length) return null;
      width = Math.max(width, view.getUint16(i + 1, true) + view.getUint16(i + 5, true));
      height = Math.max(height, view.getUint16(i + 3, true) + view.getUint16(i + 7, true));
      return { width, height };
    }
    if (block !== 0x21 || i + 2 > bytes.length) return null;
    // Extension: introducer, label, then data sub-blocks up to a zero-length one.
    i += 2;
    while (i < bytes.length && bytes[i] !== 0) i += bytes[i]! + 1;
    i += 1;
  }
  return null;
}

// WebP (RFC 9649): the first chunk is VP8X (canvas size), VP8 (lossy key frame) or VP8L (lossless).
function webpDimensions(bytes: Uint8Array, view: DataView): Dimensions | null {
  if (bytes.length < 30) return null;
  const chunk = String.fromCharCode(...bytes.subarray(12, 16));
  if (chunk === 'VP8X') {
    const u24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
    return { width: u24(24) + 1, height: u24(27) + 1 };
  }
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
    if (!startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return null;
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    if (bytes[20] !== 0x2f) return null;
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return null;
}

// JPEG: walk the marker segments to the first start-of-frame (ITU T.81 §B.2).
function jpegDimensions(bytes: Uint8Array, view: DataView): Dimensions | null {
  let i = 2;
  while (i + 4 <= bytes.length) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1]!;
    // Fill bytes, and markers without a length (TEM, RSTn, SOI).
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    // End of image or start of scan before any frame header: nothing to read.
    if (marker === 0xd9 || marker === 0xda) return null;
    const length = view.getUint16(i + 2);
    if (length < 2) return null;
    // SOF0..SOF15, except DHT (c4), JPG (c8) and DAC (cc): length, precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > bytes.length) return null;
      return { width: view.getUint16(i + 7), height: view.getUint16(i + 5) };
    }
    i += 2 + length;
  }
  return null;
}
