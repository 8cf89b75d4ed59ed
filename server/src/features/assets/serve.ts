// The answer that streams an asset, shared by GET /assets/{id} and GET /public/assets/{id}.
import type { AssetRow } from '../public/store.js';
import { ifNoneMatchHits } from './conditional.js';

/** Same-origin bytes of any type must never run as a page: no sniffing, no scripts, no origin. */
const STREAM_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
  'Content-Disposition': 'inline',
};

export type AssetAnswer =
  | { status: 200; body: Buffer; contentType: string; headers: Record<string, string> }
  | { status: 304; headers: Record<string, string> };

/**
 * The asset's bytes with its type, ETag and `cacheControl`; or 304 with the ETag and cache directives
 * (what a 200 would have sent that a cache needs, RFC 9110 §15.4.5) when If-None-Match matches.
 */
export function assetAnswer(
  asset: AssetRow,
  ifNoneMatch: string | undefined,
  cacheControl: string,
): AssetAnswer {
  if (ifNoneMatchHits(ifNoneMatch, asset.etag)) {
    return { status: 304, headers: { ETag: asset.etag, 'Cache-Control': cacheControl } };
  }
  return {
    status: 200,
    body: asset.bytes,
    contentType: asset.content_type,
    headers: { 'Cache-Control': cacheControl, ETag: asset.etag, ...STREAM_HEADERS },
  };
}
