// Request bodies by the operation's media type. JSON is openapi-fetch's default; uploads are
// multipart with a `file` part (DECISIONS.md §1); anything else is sent as given.
import type { BodySerializer } from 'openapi-fetch';

export interface BodyEncoding {
  bodySerializer?: BodySerializer<unknown>;
  /** Set when the serializer does not imply it (FormData brings its own boundary). */
  contentType?: string;
}

export function bodyEncoding(contentType: string): BodyEncoding {
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    return contentType === 'application/json' ? {} : { contentType };
  }
  if (contentType === 'multipart/form-data') return { bodySerializer: toFormData };
  return { bodySerializer: (body) => body, contentType };
}

export function toFormData(body: unknown): FormData {
  if (body instanceof FormData) return body;
  const form = new FormData();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (item instanceof Blob) form.append(name, item);
      // Copied: a view over a SharedArrayBuffer is not a valid BlobPart.
      else if (item instanceof Uint8Array) form.append(name, new Blob([new Uint8Array(item)]));
      else if (typeof item === 'object') form.append(name, JSON.stringify(item));
      else form.append(name, String(item));
    }
  }
  return form;
}
