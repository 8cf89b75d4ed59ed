// One exec'd volume server (volume-server/main.ts) on one volume, and the pool that keeps one per volume:
// calls share it (each under its request id), it is closed after IDLE_MS without calls or open files, and
// a call that finds it dead (the host instance restarted, the member's connection dropped) opens a new
// one once. Files opened through it belong to it: they fail with it, as a closed descriptor would.
import { FileLayerError, type FileLayerCode } from '../local/files/index.js';
import type { ExecSession } from './exec-session.js';
import { encodeFrame, FrameReader, type Frame } from './volume-server/frames.js';

const IDLE_MS = 30_000;
/** How long a closing server gets to let go of its files before it is killed. */
const CLOSE_GRACE_MS = 5_000;

export interface Reply {
  result: unknown;
  body: Buffer;
}

/** The session ended before it answered (the call may or may not have run). */
export class SessionGone extends Error {
  constructor() {
    super('the volume server is gone');
    this.name = 'SessionGone';
  }
}

/** The server's pipes: an exec's streams in the cluster (execPipe), or a child process's. */
export interface ServerPipe {
  readonly writable: boolean;
  send(bytes: Buffer, done: (err?: Error | null) => void): void;
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once when the server's output ends or the server exits. */
  onEnd(listener: () => void): void;
  /** Closes the server's input (it lets go of what it holds and exits); killed after `graceMs`. */
  hangUp(graceMs: number): void;
  /** The server's exit. */
  readonly exited: Promise<unknown>;
}

/** An exec's pipes as LXD carries them: stdin, stdout and stderr as WebSockets. */
export function execPipe(exec: ExecSession): ServerPipe {
  const stdin = exec.streams['0']!;
  const stdout = exec.streams['1']!;
  // Nothing is read from stderr; it is drained so LXD never blocks on it.
  exec.streams['2']?.on('message', () => undefined);
  return {
    get writable() {
      return stdin.readyState === stdin.OPEN;
    },
    send: (bytes, done) => stdin.send(bytes, { binary: true }, done),
    onData: (listener) =>
      stdout.on('message', (data: Buffer, isBinary: boolean) => {
        // LXD ends a stream with an empty text frame.
        if (isBinary || data.length > 0) listener(data);
      }),
    onEnd(listener) {
      stdout.once('close', listener);
      void exec.exit.then(listener);
    },
    hangUp(graceMs) {
      if (stdin.readyState === stdin.OPEN) stdin.close();
      exec.close(graceMs);
    },
    exited: exec.exit,
  };
}

export class VolumeSession {
  readonly #pipe: ServerPipe;
  readonly #waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  #next = 1;
  #gone = false;
  /** Files the driver holds open through this session: it is not idle while any are. */
  held = 0;
  onIdle: (() => void) | null = null;
  #idle: NodeJS.Timeout | null = null;

  constructor(pipe: ServerPipe) {
    this.#pipe = pipe;
    const reader = new FrameReader();
    pipe.onData((data) => {
      let frames: Frame[];
      try {
        frames = reader.push(data);
      } catch {
        return this.#end();
      }
      for (const frame of frames) this.#settle(frame);
    });
    pipe.onEnd(() => this.#end());
  }

  get gone(): boolean {
    return this.#gone;
  }

  call(op: string, args: Record<string, unknown> = {}, body?: Buffer): Promise<Reply> {
    if (this.#gone || !this.#pipe.writable) return Promise.reject(new SessionGone());
    const id = this.#next++;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    return new Promise<Reply>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#pipe.send(encodeFrame({ id, op, args }, body), (err) => {
        if (err) this.#end();
      });
    });
  }

  /** Closes stdin (the server lets go of what it holds and exits), killing it after a grace period. */
  close(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#pipe.hangUp(CLOSE_GRACE_MS);
    this.#end();
  }

  /** Waits until the server process has ended. */
  async ended(): Promise<void> {
    await this.#pipe.exited;
  }

  #settle(frame: Frame): void {
    const id = Number(frame.header.id);
    const waiting = this.#waiting.get(id);
    if (!waiting) return;
    this.#waiting.delete(id);
    const error = frame.header.error as Record<string, string> | undefined;
    if (error) waiting.reject(errorFrom(error));
    else waiting.resolve({ result: frame.header.result, body: frame.body });
    this.#maybeIdle();
  }

  #maybeIdle(): void {
    if (this.#waiting.size > 0 || this.held > 0 || this.#gone || this.#idle) return;
    this.#idle = setTimeout(() => this.onIdle?.(), IDLE_MS);
    this.#idle.unref();
  }

  /** Files handed back: the session may go idle again. */
  release(): void {
    this.held = Math.max(0, this.held - 1);
    this.#maybeIdle();
  }

  #end(): void {
    if (this.#gone) return;
    this.#gone = true;
    if (this.#idle) clearTimeout(this.#idle);
    for (const waiting of this.#waiting.values()) waiting.reject(new SessionGone());
    this.#waiting.clear();
    this.#pipe.hangUp(CLOSE_GRACE_MS);
  }
}

function errorFrom(error: Record<string, string>): Error {
  if (error.layer) return new FileLayerError(error.layer as FileLayerCode, error.detail ?? '');
  if (error.errno) return Object.assign(new Error(`volume server: ${error.errno}`), { code: error.errno });
  return new Error('the volume server could not complete the call');
}

/** One session per volume, opened on demand by `open`. */
export class VolumeSessions {
  readonly #sessions = new Map<string, Promise<VolumeSession>>();

  constructor(private readonly open: (volumeId: string) => Promise<VolumeSession>) {}

  async get(volumeId: string): Promise<VolumeSession> {
    const current = this.#sessions.get(volumeId);
    if (current) {
      const session = await current.catch(() => null);
      if (session && !session.gone) return session;
      if (this.#sessions.get(volumeId) === current) this.#sessions.delete(volumeId);
      else return this.get(volumeId);
    }
    const opening = this.open(volumeId).then((session) => {
      session.onIdle = () => {
        if (this.#sessions.get(volumeId) === opening) this.#sessions.delete(volumeId);
        session.close();
      };
      return session;
    });
    this.#sessions.set(volumeId, opening);
    opening.catch(() => {
      if (this.#sessions.get(volumeId) === opening) this.#sessions.delete(volumeId);
    });
    return opening;
  }

  /** A call on the volume's session; a session found dead is replaced once. */
  async call(volumeId: string, op: string, args?: Record<string, unknown>, body?: Buffer): Promise<Reply> {
    for (let attempt = 0; ; attempt++) {
      const session = await this.get(volumeId);
      try {
        return await session.call(op, args, body);
      } catch (err) {
        if (!(err instanceof SessionGone) || attempt > 0) throw err;
      }
    }
  }

  /** Ends the volume's session and waits for its server to exit (before the volume is detached). */
  async drop(volumeId: string): Promise<void> {
    const current = this.#sessions.get(volumeId);
    this.#sessions.delete(volumeId);
    const session = await current?.catch(() => null);
    if (!session) return;
    session.close();
    await session.ended();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#sessions.keys()].map((id) => this.drop(id)));
  }
}
