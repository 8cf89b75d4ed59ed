// File uploads: the multipart body of an upload operation, built from what a caller has at hand (a
// browser File or Blob, a Node Buffer, any Uint8Array).
import type { RequestOptions } from './operation-types.js';

/** An upload's bytes: a `Blob` (a browser `File` is one) or a `Uint8Array` (a Node `Buffer` is one). */
export type UploadFile = Blob | Uint8Array;

export interface UploadOptions extends RequestOptions {
  /** The part's file name. Default: a File's own name, else `upload`. The server goes by the bytes. */
  filename?: string;
}

/** A form with the single part `file` (DECISIONS.md §1), for the operations that take one. */
export function fileForm(file: UploadFile, filename?: string): FormData {
  const form = new FormData();
  // Copied: a view over a SharedArrayBuffer is not a valid BlobPart.
  const blob = file instanceof Blob ? file : new Blob([new Uint8Array(file)]);
  const name = filename ?? (typeof File !== 'undefined' && file instanceof File ? file.name : 'upload');
  form.append('file', blob, name);
  return form;
}

/** `options` without what the upload itself uses, for the call. */
export function requestOptionsOf(options: UploadOptions | undefined): RequestOptions | undefined {
  if (!options) return undefined;
  const { filename: _filename, ...rest } = options;
  return rest;
}
