// The platform's RCON client (document 2 §4 "Game servers"). The npm clients tried here keep only the
// first 4096-byte packet of a long reply or decode TCP chunks as packets; this one frames the stream
// and reassembles a reply's packets until its end marker: after each command it sends a second request
// (an empty RESPONSE_VALUE packet) that the server answers after the command's last fragment, since
// servers answer in order. One connection per server, exchanges queued one at a time on it (hammering
// a Minecraft server's RCON port crashes it: MC-72390); a failed connection is dropped and the next
// command connects again. A batch (commands()) sends a few commands and one end marker together, so
// a roster of 20 players costs a few round trips instead of one per question.
import { Socket } from 'node:net';
import { encode, PacketDecoder, RconProtocolError, TYPE, type Packet } from './packet.js';

export type RconFailure = 'auth_failed' | 'unreachable' | 'timeout' | 'protocol_error';

export class RconError extends Error {
  override readonly name = 'RconError';
  constructor(
    readonly status: RconFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface RconOptions {
  host: string;
  port: number;
  password: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

interface Pending {
  id: number;
  onPacket(packet: Packet): void;
  fail(err: RconError): void;
}

const MAX_REPLY_BYTES = 1024 * 1024;
/**
 * Commands sent together in one exchange: enough that a roster's round trips stop mattering, few enough
 * that a server working through them answers the marker well within one command's timeout.
 */
export const BATCH = 16;

export class RconClient {
  #socket: Socket | null = null;
  #ready: Promise<void> | null = null;
  #pending: Pending | null = null;
  #nextId = 1;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(private readonly options: RconOptions) {}

  /** Runs `command` and answers its whole reply; commands wait their turn on the one connection. */
  async command(command: string): Promise<string> {
    const [reply] = await this.commands([command]);
    return reply!;
  }

  /**
   * Runs `commands` in order, BATCH at a time per round trip, and answers their replies in the same
   * order. The whole list is one turn on the connection: nothing queued meanwhile runs between them.
   */
  commands(commands: readonly string[]): Promise<string[]> {
    const run = this.#queue.then(async () => {
      const replies: string[] = [];
      for (let i = 0; i < commands.length; i += BATCH)
        replies.push(...(await this.#run(commands.slice(i, i + BATCH))));
      return replies;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.#closed = true;
    this.#drop(new RconError('unreachable', 'client closed'));
  }

  async #run(commands: readonly string[]): Promise<string[]> {
    if (this.#closed) throw new RconError('unreachable', 'client closed');
    await this.#connection();
    const ids = commands.map(() => this.#id());
    const marker = this.#id();
    const parts = commands.map(() => [] as string[]);
    const sizes = commands.map(() => 0);
    // Servers answer in order: a fragment of an earlier command after a later one's is not RCON.
    let at = 0;
    return this.#exchange(
      [
        ...commands.map((body, i) => ({ id: ids[i]!, type: TYPE.command, body })),
        { id: marker, type: TYPE.response, body: '' },
      ],
      this.options.commandTimeoutMs ?? 5000,
      (packet, done) => {
        if (packet.id === marker) {
          done(parts.map((p) => p.join('')));
          return;
        }
        const i = ids.indexOf(packet.id, at);
        if (i < 0) throw new RconProtocolError(`reply for unknown request ${packet.id}`);
        at = i;
        sizes[i]! += packet.body.length;
        if (sizes[i]! > MAX_REPLY_BYTES) throw new RconProtocolError('reply too long');
        parts[i]!.push(packet.body);
      },
    );
  }

  #id(): number {
    const id = this.#nextId;
    this.#nextId = this.#nextId >= 0x7ffffff0 ? 1 : this.#nextId + 1;
    return id;
  }

  #connection(): Promise<void> {
    this.#ready ??= this.#open().catch((err: unknown) => {
      this.#drop(err instanceof RconError ? err : new RconError('protocol_error', 'connection failed'));
      throw err;
    });
    return this.#ready;
  }

  async #open(): Promise<void> {
    const socket = new Socket();
    this.#socket = socket;
    const decoder = new PacketDecoder();
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      let packets: Packet[];
      try {
        packets = decoder.push(chunk);
      } catch (err) {
        this.#drop(new RconError('protocol_error', (err as Error).message));
        return;
      }
      for (const packet of packets) {
        if (!this.#pending) {
          this.#drop(new RconError('protocol_error', 'a packet nobody asked for'));
          return;
        }
        this.#pending.onPacket(packet);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.#socket === socket) this.#drop(new RconError('unreachable', 'connection closed'));
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new RconError('timeout', 'connect timed out'));
      }, this.options.connectTimeoutMs ?? 3000);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new RconError('unreachable', err.code ?? 'connect failed'));
      });
      socket.connect(this.options.port, this.options.host);
    });
    const id = this.#id();
    await this.#exchange(
      [{ id, type: TYPE.auth, body: this.options.password }],
      this.options.commandTimeoutMs ?? 5000,
      (packet, done) => {
        // Source servers send an empty RESPONSE_VALUE before the auth answer; Minecraft does not.
        if (packet.type === TYPE.response && packet.id === id) return;
        if (packet.type !== TYPE.authResponse)
          throw new RconProtocolError(`auth answered with type ${packet.type}`);
        if (packet.id === -1) throw new RconError('auth_failed', 'the server refused the password');
        if (packet.id !== id) throw new RconProtocolError(`auth answered for request ${packet.id}`);
        done(undefined);
      },
    );
  }

  /** Sends `packets` and feeds what comes back to `handle` until it calls done, or the time is up. */
  #exchange<T>(
    packets: Packet[],
    timeoutMs: number,
    handle: (packet: Packet, done: (value: T) => void) => void,
  ): Promise<T> {
    const socket = this.#socket;
    if (!socket) return Promise.reject(new RconError('unreachable', 'not connected'));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => this.#drop(new RconError('timeout', 'the server did not answer in time')),
        timeoutMs,
      );
      const finish = () => {
        clearTimeout(timer);
        this.#pending = null;
      };
      this.#pending = {
        id: packets[0]!.id,
        onPacket: (packet) => {
          try {
            handle(packet, (value) => {
              finish();
              resolve(value);
            });
          } catch (err) {
            this.#drop(
              err instanceof RconError ? err : new RconError('protocol_error', (err as Error).message),
            );
          }
        },
        fail: (err) => {
          finish();
          reject(err);
        },
      };
      socket.write(Buffer.concat(packets.map(encode)));
    });
  }

  /** Ends the connection: what was waiting fails with `err`, and the next command connects again. */
  #drop(err: RconError): void {
    const pending = this.#pending;
    const socket = this.#socket;
    this.#pending = null;
    this.#socket = null;
    this.#ready = null;
    socket?.destroy();
    pending?.fail(err);
  }
}
