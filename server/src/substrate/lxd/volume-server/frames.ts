// The volume server's wire format, both ways over an exec's pipes: a frame is a 4-byte big-endian length
// of a JSON header, a 4-byte length of a binary body, the header, the body. Bodies carry file bytes as
// they are (no base64); headers carry the call, its request id and its answer.
export interface Frame {
  header: Record<string, unknown>;
  body: Buffer;
}

/** Headers are small; a larger one is a broken stream, not a request to buffer. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** A body is one transfer block (the gateway's 1 MiB, SFTP's 256 KiB) with room to spare. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export function encodeFrame(header: Record<string, unknown>, body: Buffer = EMPTY): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.allocUnsafe(8);
  prefix.writeUInt32BE(json.length, 0);
  prefix.writeUInt32BE(body.length, 4);
  return Buffer.concat([prefix, json, body]);
}

const EMPTY = Buffer.alloc(0);

/** Cuts a byte stream (arriving in pieces of any size) into frames. */
export class FrameReader {
  #chunks: Buffer[] = [];
  #buffered = 0;

  /** Adds bytes; answers every frame now complete. Throws on a stream that cannot be frames. */
  push(chunk: Buffer): Frame[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (this.#buffered < 8) break;
      const head = this.#peek(8);
      const headerBytes = head.readUInt32BE(0);
      const bodyBytes = head.readUInt32BE(4);
      if (headerBytes > MAX_HEADER_BYTES || bodyBytes > MAX_BODY_BYTES) throw new Error('oversized frame');
      const total = 8 + headerBytes + bodyBytes;
      if (this.#buffered < total) break;
      const whole = this.#take(total);
      const header = JSON.parse(whole.subarray(8, 8 + headerBytes).toString('utf8')) as Record<
        string,
        unknown
      >;
      frames.push({ header, body: whole.subarray(8 + headerBytes) });
    }
    return frames;
  }

  #peek(n: number): Buffer {
    if (this.#chunks[0]!.length < n) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0]!.subarray(0, n);
  }

  #take(n: number): Buffer {
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    const rest = all.subarray(n);
    this.#chunks = rest.length ? [rest] : [];
    this.#buffered = rest.length;
    // A copy: the frame outlives the buffer it was cut from.
    return Buffer.from(all.subarray(0, n));
  }
}
