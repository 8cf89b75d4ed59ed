// The image pipeline for pictures people upload (avatars now; organization and reseller icons later):
// recognise the format by its bytes, refuse what is too large before decoding, decode the first frame
// only, turn it upright, crop it to a square and store it as a lossy WebP without metadata.
// Seed document 1, "Identity": "re-encoded to a 512x512 lossy WebP with orientation applied and other
// metadata stripped".
import type { Logger } from 'pino';
import sharp from 'sharp';
import { ApiError, invalidFieldValue, unsupportedMediaType } from '../http/errors.js';
import { UPLOAD_MAX_BYTES } from '../http/multipart.js';
import { headerDimensions, sniffFormat, type ImageFormat } from './format.js';

/** 40 megapixels: larger images are refused before they are decoded (spec: meAvatarUpload). */
export const MAX_INPUT_PIXELS = 40_000_000;
/** A decode that takes longer than this is given up (libvips stops at the next check). */
const TIMEOUT_SECONDS = 10;
const WEBP_QUALITY = 82;
/**
 * Decodes at once per process. A 40-megapixel image takes up to ~160 MB while it is decoded, and
 * libuv's pool would otherwise run four at a time; the rest wait their turn here.
 */
const CONCURRENT_DECODES = 2;

let running = 0;
const waiting: (() => void)[] = [];

/** Runs `work` when fewer than CONCURRENT_DECODES others run, in arrival order. */
export async function decodeSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= CONCURRENT_DECODES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter, so `running` never drops below the queue's need.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

export interface NormalizeOptions {
  /** The side of the square output, in pixels (its width when `height` is given). */
  size: number;
  /** The output's height, for a rectangle such as a 1200×630 link-preview image; default `size`. */
  height?: number;
  /** Where a refused decode's reason goes (never to the caller; never with the bytes). */
  log?: Pick<Logger, 'warn'>;
  /** Carried into that log line. */
  requestId?: string;
}

export interface NormalizedImage {
  bytes: Buffer;
  contentType: 'image/webp';
  width: number;
  height: number;
  /** The format the input was recognised as. */
  source: ImageFormat;
}

const FIELD = [{ location: 'body' as const, pointer: '/file', message: 'is not a usable image' }];

/**
 * `bytes` as a `size`×`size` lossy WebP: upright (EXIF orientation applied), cropped to cover the
 * square, first frame only, no EXIF, ICC or XMP left. Refusals are ApiErrors: 415
 * unsupported-media-type for anything but JPEG, PNG, WebP or GIF; 413 above the upload limit; 400
 * invalid-field-value above MAX_INPUT_PIXELS or when the image cannot be decoded.
 */
export async function normalizeImage(bytes: Buffer, options: NormalizeOptions): Promise<NormalizedImage> {
  if (bytes.length > UPLOAD_MAX_BYTES) {
    throw new ApiError(
      413,
      'payload-too-large',
      `The file is larger than ${UPLOAD_MAX_BYTES / (1024 * 1024)} MB.`,
    );
  }
  const format = sniffFormat(bytes);
  if (format === null)
    throw unsupportedMediaType('Upload a JPEG, PNG, WebP or GIF image; this file is none of them.');
  // The header's own claim, checked before any decoder runs: a 20000×20000 image of a few KB is
  // refused here, in microseconds, without a byte of pixel memory. (limitInputPixels below refuses
  // it too, in case a header this reader cannot follow declares more than it finds.)
  const declared = headerDimensions(bytes, format);
  if (declared && declared.width * declared.height > MAX_INPUT_PIXELS) {
    throw invalidFieldValue(
      `The image is too large: ${declared.width}×${declared.height} pixels, more than ${MAX_INPUT_PIXELS / 1_000_000} megapixels.`,
      FIELD,
    );
  }
  try {
    const { data, info } = await decodeSlot(() =>
      sharp(bytes, {
        limitInputPixels: MAX_INPUT_PIXELS,
        // Corrupt or truncated pixel data is refused; a harmless warning (extraneous bytes) is not.
        failOn: 'error',
        // The first frame of an animated GIF or WebP.
        pages: 1,
      })
        .timeout({ seconds: TIMEOUT_SECONDS })
        .rotate()
        .resize(options.size, options.height ?? options.size, { fit: 'cover', position: 'centre' })
        // Lossy WebP; sharp writes no metadata unless asked to (withMetadata/keepMetadata), so EXIF, ICC
        // and XMP are gone and the pixels are converted to sRGB.
        .webp({ quality: WEBP_QUALITY })
        .toBuffer({ resolveWithObject: true }),
    );
    return { bytes: data, contentType: 'image/webp', width: info.width, height: info.height, source: format };
  } catch (err) {
    // libvips' message may name internals; the log gets it, the caller a plain refusal.
    options.log?.warn(
      {
        request_id: options.requestId,
        format,
        size: bytes.length,
        reason: err instanceof Error ? err.message.split('\n')[0] : String(err),
      },
      'image refused by the decoder',
    );
    throw invalidFieldValue('The image could not be read: it is damaged, truncated or too large.', FIELD);
  }
}
