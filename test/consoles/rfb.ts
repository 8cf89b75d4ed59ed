// A small RFB 3.8 client over a gateway screen socket, for the screen tests: the handshake as noVNC does
// it, framebuffer update requests, and the server messages read whole (raw rectangles and the LED state
// pseudo-encoding, the only encodings it asks for).
import type WebSocket from 'ws';

export const ENCODING_RAW = 0;
/** QEMU's LED state pseudo-encoding: Xvnc sends its keyboard lock LEDs (1 scroll, 2 num, 4 caps). */
export const ENCODING_LED_STATE = -261;
export const KEY = { capsLock: 0xffe5, numLock: 0xff7f };

export interface ServerInit {
  version: string;
  securityTypes: number[];
  securityResult: number;
  width: number;
  height: number;
  bitsPerPixel: number;
  name: string;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
  encoding: number;
  /** Raw pixels, or the LED state byte. */
  data: Buffer;
}

export class RfbClient {
  #buffer = Buffer.alloc(0);
  #waiter: (() => void) | null = null;
  #closed = false;
  bitsPerPixel = 32;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return;
      this.#buffer = Buffer.concat([this.#buffer, data]);
      this.#waiter?.();
    });
    ws.once('close', () => {
      this.#closed = true;
      this.#waiter?.();
    });
  }

  /** The next `n` bytes from the server; rejects if the socket closes or nothing comes for `timeoutMs`. */
  async take(n: number, timeoutMs = 20_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.#buffer.length < n) {
      if (this.#closed) throw new Error(`the socket closed; ${this.#buffer.length} of ${n} bytes came`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${n} bytes (${this.#buffer.length} came)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiter = () => {
          clearTimeout(timer);
          this.#waiter = null;
          resolve();
        };
      });
    }
    const out = this.#buffer.subarray(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  send(bytes: Buffer): void {
    this.ws.send(bytes, { binary: true });
  }

  /** ProtocolVersion, security None, ClientInit, ServerInit. */
  async handshake(shared = true): Promise<ServerInit> {
    const version = (await this.take(12)).toString('latin1');
    this.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const count = (await this.take(1))[0]!;
    const securityTypes = [...(await this.take(count))];
    this.send(Buffer.from([1]));
    const securityResult = (await this.take(4)).readUInt32BE(0);
    this.send(Buffer.from([shared ? 1 : 0]));
    const init = await this.take(24);
    const name = (await this.take(init.readUInt32BE(20))).toString('utf8');
    this.bitsPerPixel = init[4]!;
    return {
      version,
      securityTypes,
      securityResult,
      width: init.readUInt16BE(0),
      height: init.readUInt16BE(2),
      bitsPerPixel: init[4]!,
      name,
    };
  }

  setEncodings(encodings: number[]): void {
    const b = Buffer.alloc(4 + 4 * encodings.length);
    b[0] = 2;
    b.writeUInt16BE(encodings.length, 2);
    encodings.forEach((e, i) => b.writeInt32BE(e, 4 + 4 * i));
    this.send(b);
  }

  requestUpdate(incremental: boolean, x: number, y: number, width: number, height: number): void {
    const b = Buffer.alloc(10);
    b[0] = 3;
    b[1] = incremental ? 1 : 0;
    b.writeUInt16BE(x, 2);
    b.writeUInt16BE(y, 4);
    b.writeUInt16BE(width, 6);
    b.writeUInt16BE(height, 8);
    this.send(b);
  }

  key(keysym: number): void {
    for (const down of [1, 0]) {
      const b = Buffer.alloc(8);
      b[0] = 4;
      b[1] = down;
      b.writeUInt32BE(keysym, 4);
      this.send(b);
    }
  }

  /** The next FramebufferUpdate's rectangles (server messages of other kinds before it are skipped). */
  async readUpdate(): Promise<Rect[]> {
    for (;;) {
      const type = (await this.take(1))[0]!;
      if (type === 0) break;
      if (type === 2 || type === 150) continue; // Bell, EndOfContinuousUpdates
      if (type === 3) {
        const head = await this.take(7);
        await this.take(head.readUInt32BE(3));
        continue;
      }
      if (type === 248) {
        const head = await this.take(8);
        await this.take(head[7]!);
        continue;
      }
      throw new Error(`unexpected server message ${type}`);
    }
    const count = (await this.take(3)).readUInt16BE(1);
    const rects: Rect[] = [];
    for (let i = 0; i < count; i++) {
      const h = await this.take(12);
      const rect = {
        x: h.readUInt16BE(0),
        y: h.readUInt16BE(2),
        width: h.readUInt16BE(4),
        height: h.readUInt16BE(6),
        encoding: h.readInt32BE(8),
      };
      if (rect.encoding === ENCODING_RAW) {
        rects.push({ ...rect, data: await this.take(rect.width * rect.height * (this.bitsPerPixel / 8)) });
      } else if (rect.encoding === ENCODING_LED_STATE) {
        rects.push({ ...rect, data: await this.take(1) });
      } else {
        throw new Error(`unexpected encoding ${rect.encoding}`);
      }
    }
    return rects;
  }

  /** Reads updates (asking for more each time) until one carries the LED state; answers it. */
  async nextLedState(): Promise<number> {
    for (;;) {
      const led = (await this.readUpdate()).find((r) => r.encoding === ENCODING_LED_STATE);
      if (led) return led.data[0]!;
      this.requestUpdate(true, 0, 0, 16, 16);
    }
  }
}
