// Source RCON packets as Minecraft speaks them (wiki.vg "RCON"): int32 length (LE, counting what
// follows), int32 request id, int32 type, an ASCII body, two NUL bytes. A reply longer than 4096 bytes
// comes as several packets of the same id; TCP may also split or join packets anywhere, so the
// decoder frames the byte stream itself.
export const TYPE = { response: 0, command: 2, authResponse: 2, auth: 3 } as const;

// Vanilla reads at most 1460-byte requests; servers answer in 4096-byte bodies. Anything bigger than
// this is not RCON and ends the connection rather than buffering without bound.
const MAX_LENGTH = 4096 + 10 + 1024;
const MIN_LENGTH = 10;

export interface Packet {
  id: number;
  type: number;
  body: string;
}

export class RconProtocolError extends Error {
  override readonly name = 'RconProtocolError';
}

export function encode(packet: Packet): Buffer {
  const body = Buffer.from(packet.body, 'utf8');
  const out = Buffer.alloc(14 + body.length);
  out.writeInt32LE(10 + body.length, 0);
  out.writeInt32LE(packet.id, 4);
  out.writeInt32LE(packet.type, 8);
  body.copy(out, 12);
  return out;
}

/** Accumulates bytes and hands out whole packets; throws RconProtocolError on a malformed one. */
export class PacketDecoder {
  #buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Packet[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const packets: Packet[] = [];
    while (this.#buffer.length >= 4) {
      const length = this.#buffer.readInt32LE(0);
      if (length < MIN_LENGTH || length > MAX_LENGTH) throw new RconProtocolError(`packet length ${length}`);
      if (this.#buffer.length < 4 + length) break;
      const frame = this.#buffer.subarray(4, 4 + length);
      if (frame[length - 1] !== 0 || frame[length - 2] !== 0)
        throw new RconProtocolError('packet without its NUL ending');
      packets.push({
        id: frame.readInt32LE(0),
        type: frame.readInt32LE(4),
        body: frame.subarray(8, length - 2).toString('utf8'),
      });
      this.#buffer = this.#buffer.subarray(4 + length);
    }
    return packets;
  }
}
