// The file layer's refusals as the API's problems (DECISIONS.md §6 "Files"), one to one by code. Their
// details name only paths within the volume, never the host's.
import { ApiError, insufficientStorage } from '../../http/errors.js';
import { isStorageFull, STORAGE_FULL_DETAIL } from '../../substrate/storage-full.js';
import { FileLayerError, type FileLayerCode } from '../../substrate/local/files/index.js';

const STATUS: Record<FileLayerCode, number> = {
  'invalid-path': 400,
  'not-found': 404,
  'file-too-large': 422,
  'file-not-text': 422,
  'mount-root': 422,
  'directory-not-empty': 409,
  'not-a-directory': 422,
  'is-a-directory': 422,
};

/** Runs a file-layer call, answering its refusals as problems. */
export async function fileCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof FileLayerError) throw new ApiError(STATUS[err.code], err.code, err.detail);
    if (isStorageFull(err)) throw insufficientStorage(STORAGE_FULL_DETAIL);
    throw err;
  }
}
