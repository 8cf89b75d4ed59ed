// The workload's command console (document 2 §4 "Consoles and tickets"): the program's stdin and
// stdout, held by the agent, not a process per viewer. Every viewer shares the one session: on attach a
// viewer first gets the scrollback (the last 64 KiB, DECISIONS.md §6), prefixed with the ANSI soft reset
// `ESC [ ! p` when older output was dropped, then the live output; what any viewer sends goes to stdin.
//
// Viewers reach it through a Unix socket in the abstract namespace (a path under DATA_DIR can exceed the
// 108 bytes sun_path holds); the socket's name and a random key are in console.json (mode 0600) in the
// unit directory, and a connection must send the key's line first, so only a process that can read the
// unit directory (the gateway) attaches.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES } from '../substrate/local/layout.js';

export const SCROLLBACK_BYTES = 64 * 1024;
export const SOFT_RESET = Buffer.from('\x1b[!p');
/** A viewer whose socket holds this much unsent output stops the workload's output until it drains… */
const VIEWER_HIGH_WATER = 1024 * 1024;
/** …and is dropped when it has not drained for this long (a stuck viewer must not stall the others). */
const VIEWER_STALL_MS = 10_000;
const KEY_BYTES = 32;

/** console.json: how the gateway reaches the console (substrate/local/console.ts reads it). */
export interface ConsoleEndpoint {
  /** The abstract socket's name, without the leading NUL. */
  name: string;
  /** Hex; sent as the first line of every connection. */
  key: string;
}

export interface ConsoleHub {
  /** Output of the workload (stdout and stderr). */
  output(chunk: Buffer): void;
  /** The workload's stdin now (null while no process runs: input is then dropped). */
  attachInput(stdin: Writable | null): void;
  /** Whether the output should pause (a viewer is full); `onResume` is called when it may go on. */
  readonly paused: boolean;
  onResume(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * The last `capacity` bytes, and whether anything older was dropped. It keeps the output's own chunks
 * (each read from the workload is a buffer of its own, never reused) instead of copying them into a
 * ring: at full speed that copy of every byte was the agent's largest cost (scripts/bench/console.ts).
 */
export class Scrollback {
  #chunks: Buffer[] = [];
  #length = 0;
  truncated = false;
  constructor(readonly capacity = SCROLLBACK_BYTES) {}
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    while (this.#length - this.#chunks[0]!.length >= this.capacity) {
      this.#length -= this.#chunks.shift()!.length;
      this.truncated = true;
    }
    if (this.#length > this.capacity) {
      const over = this.#length - this.capacity;
      // A view, not a copy: what it holds beyond the capacity is at most one chunk.
      this.#chunks[0] = this.#chunks[0]!.subarray(over);
      this.#length -= over;
      this.truncated = true;
    }
  }
  /** What a viewer attaching now first receives. */
  replay(): Buffer {
    return Buffer.concat(this.truncated ? [SOFT_RESET, ...this.#chunks] : this.#chunks);
  }
}

export function consoleSocketName(unitDir: string): string {
  return `svc-console-${createHash('sha256').update(unitDir).digest('hex').slice(0, 32)}`;
}

export async function startConsoleHub(unitDir: string): Promise<ConsoleHub> {
  const scrollback = new Scrollback();
  const viewers = new Set<Socket>();
  const stalled = new Map<Socket, NodeJS.Timeout>();
  const resumeListeners: (() => void)[] = [];
  let stdin: Writable | null = null;
  const key = randomBytes(KEY_BYTES);
  const keyLine = Buffer.from(`${key.toString('hex')}\n`);

  const isPaused = () => stalled.size > 0;
  const drained = (viewer: Socket) => {
    const timer = stalled.get(viewer);
    if (!timer) return;
    clearTimeout(timer);
    stalled.delete(viewer);
    if (!isPaused()) for (const listener of resumeListeners) listener();
  };

  const admit = (viewer: Socket) => {
    viewers.add(viewer);
    viewer.write(scrollback.replay());
    viewer.on('data', (data: Buffer) => {
      if (stdin && !stdin.destroyed && stdin.writable) stdin.write(data);
    });
    viewer.on('drain', () => drained(viewer));
    viewer.once('close', () => {
      viewers.delete(viewer);
      drained(viewer);
    });
  };

  const server: Server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    // The key's line first; nothing is sent before it arrived whole.
    let head = Buffer.alloc(0);
    const onHead = (data: Buffer) => {
      head = Buffer.concat([head, data]);
      if (head.length < keyLine.length) return;
      socket.off('data', onHead);
      const given = head.subarray(0, keyLine.length);
      if (!timingSafeEqual(given, keyLine)) {
        socket.destroy();
        return;
      }
      admit(socket);
      const rest = head.subarray(keyLine.length);
      if (rest.length > 0) socket.emit('data', rest);
    };
    socket.on('data', onHead);
    socket.setTimeout(5_000, () => {
      if (!viewers.has(socket)) socket.destroy();
    });
  });
  const name = consoleSocketName(unitDir);
  // An agent this one displaced may hold the name for a moment longer (agent.ts claimUnit).
  for (let attempt = 0; ; attempt += 1) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(`\0${name}`, () => {
          server.off('error', reject);
          resolve();
        });
      });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const endpoint: ConsoleEndpoint = { name, key: key.toString('hex') };
  await writeJsonAtomic(join(unitDir, UNIT_FILES.console), endpoint, 0o600);

  // Output read in one turn of the event loop leaves in one write per viewer (corked until the next
  // turn): fewer system calls here and fewer, larger reads in the gateway.
  let corked: Socket[] = [];
  const uncork = () => {
    for (const viewer of corked) viewer.uncork();
    corked = [];
  };

  return {
    output(chunk) {
      scrollback.push(chunk);
      if (corked.length === 0 && viewers.size > 0) {
        corked = [...viewers];
        for (const viewer of corked) viewer.cork();
        setImmediate(uncork);
      }
      for (const viewer of viewers) {
        if (viewer.write(chunk) || viewer.writableLength < VIEWER_HIGH_WATER || stalled.has(viewer)) continue;
        stalled.set(
          viewer,
          setTimeout(() => viewer.destroy(), VIEWER_STALL_MS),
        );
      }
    },
    attachInput(next) {
      stdin = next;
      next?.on('error', () => undefined);
    },
    get paused() {
      return isPaused();
    },
    onResume(listener) {
      resumeListeners.push(listener);
    },
    async close() {
      for (const viewer of viewers) viewer.destroy();
      for (const timer of stalled.values()) clearTimeout(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
