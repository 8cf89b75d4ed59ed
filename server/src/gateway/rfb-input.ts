// The client's half of RFB 3.8 (RFC 6143, with the extensions noVNC sends), cut into whole messages so
// the gateway can drop a watcher's input: only the screen's holder types and points (DECISIONS.md §6
// "Screen"; issue 19: non-holders keep watching read-only). The server's half passes through untouched.

/** What the gateway does with a client message. */
export type ClientMessage =
  | { kind: 'forward'; bytes: Buffer }
  /** Input: forwarded only from the holder's socket. */
  | { kind: 'input'; bytes: Buffer };

export class RfbProtocolError extends Error {}
export class RfbMessageTooLarge extends Error {}

/** Only RFB 3.8 is spoken (as noVNC speaks it with a 3.8 server). */
export const RFB_VERSION = 'RFB 003.008\n';
/** A single client message larger than this (a clipboard) closes the socket. */
export const MAX_CLIENT_MESSAGE_BYTES = 1024 * 1024;

const enum Phase {
  Version,
  Security,
  ClientInit,
  Messages,
}

const INPUT_TYPES = new Set([4, 5, 6, 250, 251]);

export class RfbClientParser {
  #phase = Phase.Version;
  #pending: Buffer = Buffer.alloc(0);

  /** Cuts `chunk` (with what was left over) into whole messages; keeps a partial one for the next chunk. */
  push(chunk: Buffer): ClientMessage[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const out: ClientMessage[] = [];
    for (;;) {
      const length = this.#nextLength();
      if (length === null || this.#pending.length < length) break;
      const bytes = this.#pending.subarray(0, length);
      this.#pending = this.#pending.subarray(length);
      out.push(this.#take(bytes));
    }
    return out;
  }

  #take(bytes: Buffer): ClientMessage {
    switch (this.#phase) {
      case Phase.Version:
        if (bytes.toString('latin1') !== RFB_VERSION) throw new RfbProtocolError('only RFB 3.8 is spoken');
        this.#phase = Phase.Security;
        return { kind: 'forward', bytes };
      case Phase.Security:
        this.#phase = Phase.ClientInit;
        return { kind: 'forward', bytes };
      case Phase.ClientInit:
        this.#phase = Phase.Messages;
        // Always shared: one viewer's ClientInit never disconnects the others.
        return { kind: 'forward', bytes: Buffer.from([1]) };
      case Phase.Messages: {
        const type = bytes[0]!;
        const input = INPUT_TYPES.has(type) || (type === 255 && bytes[1] === 0);
        return { kind: input ? 'input' : 'forward', bytes };
      }
    }
  }

  /** The length of the next whole message, or null until enough of it arrived to tell. */
  #nextLength(): number | null {
    const b = this.#pending;
    const need = (n: number) => b.length >= n;
    let length: number | null;
    switch (this.#phase) {
      case Phase.Version:
        return 12;
      case Phase.Security:
      case Phase.ClientInit:
        return 1;
      case Phase.Messages:
        if (!need(1)) return null;
        length = messageLength(b);
    }
    if (length !== null && length > MAX_CLIENT_MESSAGE_BYTES) throw new RfbMessageTooLarge();
    return length;
  }
}

/** A client message's length from its first bytes (null: not enough of them yet). */
export function messageLength(b: Buffer): number | null {
  const need = (n: number) => b.length >= n;
  switch (b[0]) {
    case 0: // SetPixelFormat
      return 20;
    case 2: // SetEncodings
      return need(4) ? 4 + 4 * b.readUInt16BE(2) : null;
    case 3: // FramebufferUpdateRequest
      return 10;
    case 4: // KeyEvent
      return 8;
    case 5: // PointerEvent
      return 6;
    case 6: // ClientCutText; a negative length is the extended clipboard's (its size is the absolute value)
      return need(8) ? 8 + Math.abs(b.readInt32BE(4)) : null;
    case 150: // EnableContinuousUpdates
      return 10;
    case 248: // ClientFence
      return need(9) ? 9 + b[8]! : null;
    case 250: // xvp (shutdown, reboot, reset)
      return 4;
    case 251: // SetDesktopSize
      return need(8) ? 8 + 16 * b[6]! : null;
    case 255: // QEMU: extended key event, audio
      if (!need(2)) return null;
      if (b[1] === 0) return 12;
      if (b[1] === 1) return need(4) ? (b.readUInt16BE(2) === 2 ? 10 : 4) : null;
      throw new RfbProtocolError('unknown QEMU message');
    default:
      throw new RfbProtocolError(`unknown client message ${b[0]}`);
  }
}
