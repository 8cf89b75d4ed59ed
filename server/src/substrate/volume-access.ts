// What the platform's file paths (file routes, gateway downloads and sessions, SFTP, imports, the game
// roster) ask of a volume's files, apart from where the confined file layer runs: on this machine
// (local/files/, the local substrate and an LXD member whose volumes are here) or inside an LXD cluster
// over an exec stream (lxd/volume-client.ts). Both answer the layer's refusals as FileLayerError.
import type { Stats } from 'node:fs';

// The file layer's shapes, owned here so every driver (local/files/, lxd/volume-client.ts) implements this
// interface without importing another driver's.

export interface FileEntry {
  kind: 'file' | 'directory';
  name: string;
  path: string;
  modified_at: string | null;
  size_bytes: number | null;
}

export interface Listing {
  path: string;
  entries: FileEntry[];
  truncated: boolean;
}

export interface FileContent {
  path: string;
  content: string;
  size_bytes: number;
}

export interface OpenMode {
  read: boolean;
  write: boolean;
  append?: boolean;
  create?: boolean;
  truncate?: boolean;
  exclusive?: boolean;
  /** The mode a created file gets, less the process umask (as open(2) does); default 0644. */
  createMode?: number;
}

export interface Attributes {
  mode?: number;
  size?: number;
  atime?: number | Date;
  mtime?: number | Date;
}

export interface LocalFileInfo {
  size: number;
  /** Whole seconds, as SFTP carries them. */
  mtimeSec: number;
}

export interface IncomingFile {
  /** Writes `bytes` at `position` (chunks may arrive out of order). */
  write(bytes: Buffer, position: number): Promise<void>;
  /** Sets the modification time, and renames the file over its name. */
  commit(mtimeSec: number): Promise<void>;
  /** Removes the temporary file; the name keeps what it had. */
  abort(): Promise<void>;
}

export interface VolumeTreeEntry {
  path: string;
  kind: 'file' | 'directory' | 'other';
}

/** What SFTP shows of an entry: node's Stats carries all of it. */
export type FileStats = Pick<
  Stats,
  | 'mode'
  | 'uid'
  | 'gid'
  | 'size'
  | 'nlink'
  | 'atimeMs'
  | 'mtimeMs'
  | 'atime'
  | 'mtime'
  | 'isFile'
  | 'isDirectory'
>;

export interface NamedFileStats {
  name: string;
  stats: FileStats;
}

/** An open regular file of a volume, as SFTP uses it (a node FileHandle is one). */
export interface VolumeFileHandle {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  write(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  stat(): Promise<FileStats>;
  truncate(length: number): Promise<void>;
  chmod(mode: number): Promise<void>;
  utimes(atime: number | Date, mtime: number | Date): Promise<void>;
  close(): Promise<void>;
}

export interface VolumeHandleAccess {
  openFile(path: string, mode: OpenMode): Promise<VolumeFileHandle>;
  listAll(path: string): Promise<NamedFileStats[]>;
  stat(path: string): Promise<FileStats>;
  setAttributes(path: string, attrs: Attributes): Promise<void>;
}

/** A regular file open for reading; the caller closes it. */
export interface OpenedVolumeFile {
  readonly entry: FileEntry;
  /** Reads up to `length` bytes at `position` into `buffer`; 0 at the end. */
  readAt(buffer: Buffer, position: number, length?: number): Promise<number>;
  close(): Promise<void>;
}

/** A new file beside `path`; exactly one of commit and discard is called (streams.ts PendingFile). */
export interface PendingVolumeFile {
  readonly path: string;
  readonly replacedBytes: number;
  /** Writes the buffers, one after another, from `position` (several at once: one gathered write). */
  writeAt(data: Buffer | readonly Buffer[], position: number): Promise<void>;
  commit(): Promise<FileEntry>;
  discard(): Promise<void>;
}

export interface VolumeStreamAccess {
  openRead(path: string): Promise<OpenedVolumeFile>;
  createPending(path: string): Promise<PendingVolumeFile>;
  usedBytes(): Promise<number>;
  /** Removes the temporary files killed uploads left in the volume; answers how many. */
  sweepTemporaries(): Promise<number>;
}

export interface VolumeFileAccess {
  readonly streams: VolumeStreamAccess;
  handles(): VolumeHandleAccess;
  list(path: string): Promise<Listing>;
  stat(path: string): Promise<FileEntry>;
  read(path: string): Promise<FileContent>;
  write(path: string, content: string | Buffer, options?: { maxBytes?: number }): Promise<FileEntry>;
  mkdir(path: string): Promise<FileEntry>;
  remove(path: string, options?: { recursive?: boolean }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
}

export interface VolumeImportAccess {
  fileInfo(path: string): Promise<LocalFileInfo | null>;
  mkdir(path: string): Promise<void>;
  remove(path: string): Promise<void>;
  create(path: string): Promise<IncomingFile>;
  removeLeftovers(): Promise<number>;
  tree(): Promise<VolumeTreeEntry[]>;
}
