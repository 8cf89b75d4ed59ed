export { FileLayerError, type FileLayerCode } from './errors.js';
export { parseVolumePath, type VolumePath } from './path.js';
export {
  MAX_FILE_BYTES,
  MAX_LIST_ENTRIES,
  VolumeFiles,
  type FileContent,
  type FileEntry,
  type Listing,
} from './volume-files.js';
export { VolumeHandles, type Attributes, type NamedStats, type OpenMode } from './handles.js';
export {
  IMPORT_TEMP_PREFIX,
  VolumeImportTarget,
  type IncomingFile,
  type LocalFileInfo,
  type VolumeTreeEntry,
} from './import-target.js';
export { TEMP_PREFIX, VolumeStreams, type OpenedFile, type PendingFile } from './streams.js';
export type { OwnedVolumeRoot, VolumeRoot } from './walk.js';
