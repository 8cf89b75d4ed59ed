// One SFTP session's requests (SFTP version 3, draft-ietf-secsh-filexfer-02, as OpenSSH speaks it),
// each answered through the confined file layer on the service's volume: the volume is the session's
// `/`, paths are normalised lexically (a `..` never climbs above `/`, and since no walk ever follows a
// symbolic link the lexical path is the real one), links are never followed, listed or made.
import { posix } from 'node:path';
import { isStorageFull } from '../../substrate/storage-full.js';
import ssh2, { type Attributes, type FileEntry, type SFTPWrapper } from 'ssh2';
import { FileLayerError } from '../../substrate/local/files/index.js';
import { ReadAhead } from './read-ahead.js';
import { WriteBatcher } from './write-batch.js';
import type {
  FileStats,
  VolumeFileAccess,
  VolumeFileHandle,
  VolumeHandleAccess,
} from '../../substrate/volume-access.js';

const { STATUS_CODE, OPEN_MODE } = ssh2.utils.sftp;

/** The most one READ answers; a client asks again for the rest (OpenSSH asks 32 KiB at a time). */
const MAX_READ_BYTES = 256 * 1024;
/** Names one READDIR answers. */
const NAMES_PER_READDIR = 128;
/** Handles one session may hold open at once. */
const MAX_OPEN_HANDLES = 256;

/** A refusal with its own SFTP status (what the file layer has no code for). */
class SftpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const existsAlready = (path: string) => new SftpRefusal(STATUS_CODE.FAILURE, `${path} exists already.`);

/**
 * A file open for writing remembers what it was at open: a write that meets a full disk (ENOSPC, EDQUOT)
 * cuts it back to that size and refuses every later write on the handle, so no partial upload takes the
 * disk's last bytes (nor gets holes from pipelined writes that land once space is freed); a file this
 * open created goes at close.
 */
interface Written {
  path: string;
  created: boolean;
  sizeAtOpen: number;
  full: boolean;
}
type Open =
  | { kind: 'file'; file: VolumeFileHandle; written: Written | null; writes: WriteBatcher }
  | { kind: 'dir'; path: string; entries: FileEntry[] | null };
const volumeFull = () =>
  new SftpRefusal(
    STATUS_CODE.FAILURE,
    'No space left on device: the volume is full; nothing of this upload was kept.',
  );

export function serveSftp(sftp: SFTPWrapper, files: VolumeFileAccess, onError: (err: unknown) => void): void {
  const handles: VolumeHandleAccess = files.handles();
  const ahead = new ReadAhead();
  const open = new Map<number, Open>();
  let nextHandle = 1;

  const handleOf = (buf: Buffer): Open | undefined =>
    buf.length === 4 ? open.get(buf.readUInt32BE(0)) : undefined;
  const newHandle = (reqId: number, value: Open): void => {
    const id = nextHandle++;
    open.set(id, value);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id >>> 0, 0);
    sftp.handle(reqId, buf);
  };

  /** Runs one request; a refusal of the file layer or of the system becomes its SFTP status. */
  const serve = (reqId: number, work: () => Promise<void>): void => {
    work().catch((err: unknown) => {
      const [code, message] = statusOf(err);
      const expected = err instanceof FileLayerError || err instanceof SftpRefusal || isStorageFull(err);
      if (code === STATUS_CODE.FAILURE && !expected) onError(err);
      try {
        sftp.status(reqId, code, message);
      } catch {
        // the channel closed meanwhile
      }
    });
  };
  const ok = (reqId: number) => sftp.status(reqId, STATUS_CODE.OK);

  // Whatever the session changes, no block read ahead answers for what was there before (these
  // listeners run first, as each request arrives).
  const changed = () => ahead.clear();
  sftp.on('OPEN', (_reqId, _filename, flags) => {
    if ((flags & (OPEN_MODE.WRITE | OPEN_MODE.APPEND | OPEN_MODE.TRUNC)) !== 0) changed();
  });
  sftp.on('WRITE', changed);
  sftp.on('FSETSTAT', changed);
  sftp.on('SETSTAT', changed);
  sftp.on('REMOVE', changed);
  sftp.on('RENAME', changed);

  sftp.on('OPEN', (reqId, filename, flags, attrs) =>
    serve(reqId, async () => {
      if (open.size >= MAX_OPEN_HANDLES) throw new SftpRefusal(STATUS_CODE.FAILURE, 'Too many open handles.');
      const write = (flags & OPEN_MODE.WRITE) !== 0 || (flags & OPEN_MODE.APPEND) !== 0;
      const path = pathOf(filename);
      const existed = write
        ? await handles.stat(path).then(
            () => true,
            () => false,
          )
        : true;
      const file = await handles.openFile(path, {
        read: (flags & OPEN_MODE.READ) !== 0,
        write,
        append: (flags & OPEN_MODE.APPEND) !== 0,
        create: (flags & OPEN_MODE.CREAT) !== 0,
        truncate: (flags & OPEN_MODE.TRUNC) !== 0,
        exclusive: (flags & OPEN_MODE.EXCL) !== 0,
        // As OpenSSH's server: the client's mode for a file it creates, less the umask.
        ...(typeof attrs?.mode === 'number' ? { createMode: attrs.mode } : {}),
      });
      const written = write
        ? { path, created: !existed, sizeAtOpen: (await file.stat()).size, full: false }
        : null;
      newHandle(reqId, {
        kind: 'file',
        file,
        written,
        writes: new WriteBatcher((d, o) => writeOut(file, written, d, o)),
      });
    }),
  );

  sftp.on('READ', (reqId, handle, offset, length) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (entry?.kind !== 'file') return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      const data = await ahead.read(entry, entry.file, offset, Math.min(length, MAX_READ_BYTES));
      if (data.length === 0) return void sftp.status(reqId, STATUS_CODE.EOF);
      sftp.data(reqId, data);
    }),
  );

  sftp.on('WRITE', (reqId, handle, offset, data) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (entry?.kind !== 'file') return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      await entry.writes.add(offset, data);
      ok(reqId);
    }),
  );

  sftp.on('FSTAT', (reqId, handle) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (entry?.kind !== 'file') {
        if (entry?.kind === 'dir') return void sftp.attrs(reqId, attrsOf(await handles.stat(entry.path)));
        return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      }
      sftp.attrs(reqId, attrsOf(await entry.file.stat()));
    }),
  );

  sftp.on('FSETSTAT', (reqId, handle, attrs) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (!entry) return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      refuseOwnership(attrs);
      if (entry.kind === 'dir')
        return void (await handles.setAttributes(entry.path, changesOf(attrs)), ok(reqId));
      const change = changesOf(attrs);
      if (change.size !== undefined) await entry.file.truncate(change.size);
      if (change.mode !== undefined) await entry.file.chmod(change.mode & 0o777);
      if (change.atime !== undefined || change.mtime !== undefined) {
        const stats = await entry.file.stat();
        await entry.file.utimes(change.atime ?? stats.atime, change.mtime ?? stats.mtime);
      }
      ok(reqId);
    }),
  );

  sftp.on('CLOSE', (reqId, handle) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (!entry) return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      open.delete(handle.readUInt32BE(0));
      ahead.forget(entry);
      if (entry.kind === 'file') {
        await entry.writes.idle();
        await entry.file.close();
        if (entry.written?.full && entry.written.created)
          await files.remove(entry.written.path).catch(() => undefined);
      }
      ok(reqId);
    }),
  );

  sftp.on('OPENDIR', (reqId, path) =>
    serve(reqId, async () => {
      const normalised = pathOf(path);
      const stats = await handles.stat(normalised);
      if (!stats.isDirectory())
        throw new FileLayerError('not-a-directory', `${normalised} is not a directory.`);
      newHandle(reqId, { kind: 'dir', path: normalised, entries: null });
    }),
  );

  sftp.on('READDIR', (reqId, handle) =>
    serve(reqId, async () => {
      const entry = handleOf(handle);
      if (entry?.kind !== 'dir') return void sftp.status(reqId, STATUS_CODE.FAILURE, 'Invalid handle.');
      entry.entries ??= (await handles.listAll(entry.path)).map(({ name, stats }) => ({
        filename: name,
        longname: longnameOf(name, stats),
        attrs: attrsOf(stats),
      }));
      if (entry.entries.length === 0) return void sftp.status(reqId, STATUS_CODE.EOF);
      sftp.name(reqId, entry.entries.splice(0, NAMES_PER_READDIR));
    }),
  );

  const statRequest = (reqId: number, path: string) =>
    serve(reqId, async () => void sftp.attrs(reqId, attrsOf(await handles.stat(pathOf(path)))));
  sftp.on('LSTAT', statRequest);
  sftp.on('STAT', statRequest);

  sftp.on('SETSTAT', (reqId, path, attrs) =>
    serve(reqId, async () => {
      refuseOwnership(attrs);
      await handles.setAttributes(pathOf(path), changesOf(attrs));
      ok(reqId);
    }),
  );

  sftp.on('REALPATH', (reqId, path) =>
    serve(reqId, async () => {
      const normalised = pathOf(path);
      sftp.name(reqId, [{ filename: normalised, longname: normalised, attrs: {} as Attributes }]);
    }),
  );

  sftp.on('MKDIR', (reqId, path) =>
    serve(reqId, async () => {
      const normalised = pathOf(path);
      // SFTP's MKDIR makes one directory: an existing one is a failure, a missing parent no such file.
      const parent = posix.dirname(normalised);
      if (!(await handles.stat(parent)).isDirectory())
        throw new FileLayerError('not-found', `${parent} does not exist.`);
      if (await exists(handles, normalised)) throw existsAlready(normalised);
      await files.mkdir(normalised);
      ok(reqId);
    }),
  );

  sftp.on('RMDIR', (reqId, path) =>
    serve(reqId, async () => {
      const normalised = pathOf(path);
      if (!(await handles.stat(normalised)).isDirectory())
        throw new FileLayerError('not-a-directory', `${normalised} is not a directory.`);
      await files.remove(normalised);
      ok(reqId);
    }),
  );

  sftp.on('REMOVE', (reqId, path) =>
    serve(reqId, async () => {
      const normalised = pathOf(path);
      if ((await handles.stat(normalised)).isDirectory())
        throw new FileLayerError('is-a-directory', `${normalised} is a directory.`);
      await files.remove(normalised);
      ok(reqId);
    }),
  );

  sftp.on('RENAME', (reqId, from, to) =>
    serve(reqId, async () => {
      // SFTP v3's RENAME does not replace an existing entry (OpenSSH's server refuses it too).
      if (await exists(handles, pathOf(to))) throw existsAlready(pathOf(to));
      await files.rename(pathOf(from), pathOf(to));
      ok(reqId);
    }),
  );

  // Symbolic links are neither read nor made: a link the workload left is invisible here, and one made
  // here could lead the workload (or a later session's reader) outside the volume.
  sftp.on('READLINK', (reqId) => sftp.status(reqId, STATUS_CODE.NO_SUCH_FILE, 'No such link.'));
  sftp.on('SYMLINK', (reqId) =>
    sftp.status(reqId, STATUS_CODE.OP_UNSUPPORTED, 'Symbolic links are not offered.'),
  );

  // The client closed its side (OpenSSH's `bye`): close ours, or its ssh waits for the channel forever.
  sftp.on('end', () => sftp.end());
  sftp.on('close', () => {
    // Writes already queued land first: closing under them would fail them as errors of the server.
    for (const entry of open.values())
      if (entry.kind === 'file')
        void entry.writes
          .idle()
          .then(() => entry.file.close())
          .catch(() => undefined);
    open.clear();
  });
}

/**
 * Puts all of `data` at `offset`. Writes of a handle run one at a time (WriteBatcher), so once one meets
 * a full disk and cuts the file back, none queued behind it lands.
 */
async function writeOut(
  file: VolumeFileHandle,
  written: Written | null,
  data: Buffer,
  offset: number,
): Promise<void> {
  if (written?.full) throw volumeFull();
  try {
    for (let done = 0; done < data.length;) {
      const { bytesWritten } = await file.write(data, done, data.length - done, offset + done);
      done += bytesWritten;
    }
  } catch (err) {
    if (!isStorageFull(err) || !written) throw err;
    written.full = true;
    await file.truncate(written.sizeAtOpen).catch(() => undefined);
    throw volumeFull();
  }
}

/** The session's path as a volume path: relative names are under `/`, `.` and `..` resolved lexically. */
export function pathOf(raw: string): string {
  return posix.normalize(`/${raw}`).replace(/(.)\/+$/, '$1');
}

async function exists(handles: VolumeHandleAccess, path: string): Promise<boolean> {
  try {
    await handles.stat(path);
    return true;
  } catch (err) {
    if (err instanceof FileLayerError && err.code === 'not-found') return false;
    throw err;
  }
}

function refuseOwnership(attrs: Partial<Attributes> | undefined): void {
  if (attrs?.uid !== undefined || attrs?.gid !== undefined) {
    throw Object.assign(new Error('ownership'), { code: 'EPERM' });
  }
}

function changesOf(attrs: Partial<Attributes> | undefined) {
  return {
    mode: attrs?.mode,
    size: attrs?.size,
    atime: attrs?.atime,
    mtime: attrs?.mtime,
  };
}

function attrsOf(stats: FileStats): Attributes {
  return {
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    size: stats.size,
    atime: Math.floor(stats.atimeMs / 1000),
    mtime: Math.floor(stats.mtimeMs / 1000),
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An `ls -l` line, which clients such as OpenSSH's `sftp` print as they get it. */
function longnameOf(name: string, stats: FileStats): string {
  const bits = 'rwxrwxrwx'
    .split('')
    .map((c, i) => ((stats.mode >> (8 - i)) & 1 ? c : '-'))
    .join('');
  const t = stats.mtime;
  const when = `${MONTHS[t.getUTCMonth()]} ${String(t.getUTCDate()).padStart(2)} ${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')}`;
  return `${stats.isDirectory() ? 'd' : '-'}${bits} ${String(stats.nlink).padStart(3)} ${String(stats.uid).padEnd(8)} ${String(stats.gid).padEnd(8)} ${String(stats.size).padStart(8)} ${when} ${name}`;
}

function statusOf(err: unknown): [number, string] {
  if (err instanceof SftpRefusal) return [err.status, err.message];
  if (err instanceof FileLayerError) {
    switch (err.code) {
      case 'not-found':
        return [STATUS_CODE.NO_SUCH_FILE, err.detail];
      case 'invalid-path':
      case 'mount-root':
        return [STATUS_CODE.PERMISSION_DENIED, err.detail];
      default:
        return [STATUS_CODE.FAILURE, err.detail];
    }
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EEXIST') return [STATUS_CODE.FAILURE, 'It exists already.'];
  if (code === 'EACCES' || code === 'EPERM') return [STATUS_CODE.PERMISSION_DENIED, 'Permission denied.'];
  // SFTP v3 (what OpenSSH speaks) has no status of its own for a full disk: FAILURE, saying so.
  if (isStorageFull(err)) return [STATUS_CODE.FAILURE, 'No space left on device: the volume is full.'];
  return [STATUS_CODE.FAILURE, 'The request failed.'];
}
