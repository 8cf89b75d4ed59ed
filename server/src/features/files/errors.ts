// The file layer's refusals as the API's problems (DECISIONS.md §6 "Files"), one to one by code. Their
// details name only paths within the volume, never the host's.
import { ApiError, insufficientStorage } from '../../http/errors.js';
import { FILE_LAYER_STATUS } from '../../http/file-paths.js';
import { isStorageFull, STORAGE_FULL_DETAIL } from '../../substrate/storage-full.js';
import { FileLayerError } from '../../substrate/local/files/index.js';

/** Runs a file-layer call, answering its refusals as problems. */
export async function fileCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof FileLayerError) throw new ApiError(FILE_LAYER_STATUS[err.code], err.code, err.detail);
    if (isStorageFull(err)) throw insufficientStorage(STORAGE_FULL_DETAIL);
    throw err;
  }
}
