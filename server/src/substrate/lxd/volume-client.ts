// The confined file layer's surface (volume-access.ts) answered by a volume server inside the cluster
// (volume-server/main.ts) through the pooled exec session of the volume (volume-session.ts). Stateless
// calls go through the pool; an opened file, upload or import file is bound to the session that opened
// it, as a descriptor is to its process.
import { constants } from 'node:fs';
import type { MachineCredentials } from '../machine-credentials.js';
import type {
  Attributes,
  FileContent,
  FileEntry,
  IncomingFile,
  Listing,
  LocalFileInfo,
  OpenMode,
  VolumeTreeEntry,
  FileStats,
  NamedFileStats,
  OpenedVolumeFile,
  PendingVolumeFile,
  VolumeFileAccess,
  VolumeFileHandle,
  VolumeHandleAccess,
  VolumeImportAccess,
  VolumeStreamAccess,
} from '../volume-access.js';
import type { WireStats } from './volume-server/main.js';
import type { VolumeSession, VolumeSessions } from './volume-session.js';

const { S_IFMT, S_IFREG, S_IFDIR } = constants;

function statsOf(wire: WireStats): FileStats {
  return {
    ...wire,
    atime: new Date(wire.atimeMs),
    mtime: new Date(wire.mtimeMs),
    isFile: () => (wire.mode & S_IFMT) === S_IFREG,
    isDirectory: () => (wire.mode & S_IFMT) === S_IFDIR,
  };
}

const seconds = (t: number | Date) => (t instanceof Date ? t.getTime() / 1000 : t);

class Remote {
  constructor(
    protected readonly sessions: VolumeSessions,
    protected readonly volumeId: string,
  ) {}

  protected async ask<T>(op: string, args?: Record<string, unknown>, body?: Buffer): Promise<T> {
    return (await this.sessions.call(this.volumeId, op, args, body)).result as T;
  }

  /** A call that hands back something held open: made on one session, which then stays up for it. */
  protected async hold<T>(
    op: string,
    args: Record<string, unknown>,
  ): Promise<{ session: VolumeSession; result: T }> {
    for (let attempt = 0; ; attempt++) {
      const session = await this.sessions.get(this.volumeId);
      session.held += 1;
      try {
        return { session, result: (await session.call(op, args)).result as T };
      } catch (err) {
        session.release();
        if (session.gone && attempt === 0) continue;
        throw err;
      }
    }
  }
}

export class RemoteVolumeFiles extends Remote implements VolumeFileAccess {
  readonly streams: VolumeStreamAccess = new RemoteVolumeStreams(this.sessions, this.volumeId);

  handles(): VolumeHandleAccess {
    return new RemoteVolumeHandles(this.sessions, this.volumeId);
  }
  list = (path: string) => this.ask<Listing>('list', { path });
  stat = (path: string) => this.ask<FileEntry>('stat', { path });
  read = (path: string) => this.ask<FileContent>('read', { path });
  write = (path: string, content: string | Buffer, options: { maxBytes?: number } = {}) =>
    this.ask<FileEntry>(
      'write',
      { path, maxBytes: options.maxBytes },
      typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
    );
  mkdir = (path: string) => this.ask<FileEntry>('mkdir', { path });
  remove = (path: string, options: { recursive?: boolean } = {}) =>
    this.ask<void>('remove', { path, recursive: options.recursive ?? false });
  rename = (from: string, to: string) => this.ask<void>('rename', { from, to });
  chmod = (path: string, mode: number) => this.ask<void>('chmod', { path, mode });
}

class RemoteVolumeHandles extends Remote implements VolumeHandleAccess {
  async openFile(path: string, mode: OpenMode): Promise<VolumeFileHandle> {
    const { session, result: h } = await this.hold<number>('handles.openFile', { path, mode });
    return new RemoteFileHandle(session, h);
  }
  listAll = async (path: string): Promise<NamedFileStats[]> =>
    (await this.ask<{ name: string; stats: WireStats }[]>('handles.listAll', { path })).map(
      ({ name, stats }) => ({
        name,
        stats: statsOf(stats),
      }),
    );
  stat = async (path: string) => statsOf(await this.ask<WireStats>('handles.stat', { path }));
  setAttributes = (path: string, attrs: Attributes) =>
    this.ask<void>('handles.setAttributes', {
      path,
      attrs: {
        ...attrs,
        ...(attrs.atime !== undefined ? { atime: seconds(attrs.atime) } : {}),
        ...(attrs.mtime !== undefined ? { mtime: seconds(attrs.mtime) } : {}),
      },
    });
}

class RemoteFileHandle implements VolumeFileHandle {
  #closed = false;
  constructor(
    private readonly session: VolumeSession,
    private readonly h: number,
  ) {}

  async read(buffer: Buffer, offset: number, length: number, position: number) {
    const { body } = await this.session.call('fh.read', { h: this.h, length, position });
    body.copy(buffer, offset);
    return { bytesRead: body.length };
  }
  async write(buffer: Buffer, offset: number, length: number, position: number) {
    const { result } = await this.session.call(
      'fh.write',
      { h: this.h, position },
      buffer.subarray(offset, offset + length),
    );
    return { bytesWritten: result as number };
  }
  stat = async () => statsOf((await this.session.call('fh.stat', { h: this.h })).result as WireStats);
  truncate = async (length: number) => void (await this.session.call('fh.truncate', { h: this.h, length }));
  chmod = async (mode: number) => void (await this.session.call('fh.chmod', { h: this.h, mode }));
  utimes = async (atime: number | Date, mtime: number | Date) =>
    void (await this.session.call('fh.utimes', { h: this.h, atime: seconds(atime), mtime: seconds(mtime) }));
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (!this.session.gone) await this.session.call('fh.close', { h: this.h });
    } finally {
      this.session.release();
    }
  }
}

class RemoteVolumeStreams extends Remote implements VolumeStreamAccess {
  async openRead(path: string): Promise<OpenedVolumeFile> {
    const { session, result } = await this.hold<{ h: number; entry: FileEntry }>('streams.openRead', {
      path,
    });
    let closed = false;
    return {
      entry: result.entry,
      async readAt(buffer, position, length = buffer.length) {
        const { body } = await session.call('opened.read', { h: result.h, position, length });
        body.copy(buffer, 0);
        return body.length;
      },
      async close() {
        if (closed) return;
        closed = true;
        try {
          if (!session.gone) await session.call('opened.close', { h: result.h });
        } finally {
          session.release();
        }
      },
    };
  }

  async createPending(path: string): Promise<PendingVolumeFile> {
    const { session, result } = await this.hold<{ h: number; path: string; replacedBytes: number }>(
      'streams.createPending',
      { path },
    );
    const settle = async <T>(op: string): Promise<T> => {
      try {
        return (await session.call(op, { h: result.h })).result as T;
      } finally {
        session.release();
      }
    };
    return {
      path: result.path,
      replacedBytes: result.replacedBytes,
      writeAt: async (data, position) =>
        void (await session.call(
          'pending.writeAt',
          { h: result.h, position },
          Buffer.isBuffer(data) ? data : Buffer.concat(data),
        )),
      commit: () => settle<FileEntry>('pending.commit'),
      discard: () => settle<void>('pending.discard'),
    };
  }

  usedBytes = () => this.ask<number>('streams.usedBytes');
  sweepTemporaries = () => this.ask<number>('streams.sweepTemporaries');
}

export class RemoteImportTarget extends Remote implements VolumeImportAccess {
  fileInfo = (path: string) => this.ask<LocalFileInfo | null>('import.fileInfo', { path });
  mkdir = (path: string) => this.ask<void>('import.mkdir', { path });
  remove = (path: string) => this.ask<void>('import.remove', { path });
  async create(path: string): Promise<IncomingFile> {
    const { session, result: h } = await this.hold<number>('import.create', { path });
    const settle = async (op: string, args: Record<string, unknown> = {}) => {
      try {
        await session.call(op, { h, ...args });
      } finally {
        session.release();
      }
    };
    return {
      write: async (bytes, position) => void (await session.call('incoming.write', { h, position }, bytes)),
      commit: (mtimeSec) => settle('incoming.commit', { mtimeSec }),
      abort: () => settle('incoming.abort'),
    };
  }
  removeLeftovers = () => this.ask<number>('import.removeLeftovers');
  tree = () => this.ask<VolumeTreeEntry[]>('import.tree');
}

/** What the driver does on a volume through its volume server, besides files. */
export class RemoteVolumeMachine extends Remote {
  wipe = () => this.ask<void>('volume.wipe');
  installImage = (imageId: string) => this.ask<void>('machine.installImage', { imageId });
  installedImage = () => this.ask<string | null>('machine.installedImage');
  resetAccess = (unitId: string, credentials: MachineCredentials) =>
    this.ask<void>('machine.resetAccess', { unitId, credentials });
  setAccess = (unitId: string, credentials: MachineCredentials) =>
    this.ask<void>('machine.setAccess', { unitId, credentials });
  usedBytes = () => this.ask<number>('streams.usedBytes');
}
