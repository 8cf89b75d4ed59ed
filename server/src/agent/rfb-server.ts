// A small RFB 3.8 server (RFC 6143) for the built-in text screen (text-screen.ts): security None (its
// socket is private to the gateway's user, which checked the ticket, as with Xvnc), Raw encoding (which
// every client, noVNC included, must take), any true-colour pixel format the client sets, and key events
// handed to the console. Updates are sent when asked: a full request at once, an incremental one as soon
// as rows changed since the last update. Pointer, clipboard and the messages of extensions the server
// never advertised are read and ignored; anything else ends the connection.
import type { Socket } from 'node:net';
import { messageLength, RFB_VERSION } from '../gateway/rfb-input.js';
import { FONT, GLYPHS } from './text-font.js';
import type { TextConsole } from './text-console.js';

const FOREGROUND = [0xc0, 0xc0, 0xc0] as const;
const BACKGROUND = [0x00, 0x00, 0x00] as const;
const SECURITY_NONE = 1;
const ENCODING_RAW = 0;

interface PixelFormat {
  bitsPerPixel: number;
  depth: number;
  bigEndian: boolean;
  trueColour: boolean;
  max: [number, number, number];
  shift: [number, number, number];
}

/** What the server offers in ServerInit: 32 bits per pixel, 0x00RRGGBB little-endian. */
const SERVER_FORMAT: PixelFormat = {
  bitsPerPixel: 32,
  depth: 24,
  bigEndian: false,
  trueColour: true,
  max: [255, 255, 255],
  shift: [16, 8, 0],
};

export function framebufferSize(text: TextConsole): { width: number; height: number } {
  return { width: text.columns * FONT.width, height: text.rows * FONT.height };
}

function encodeFormat(f: PixelFormat): Buffer {
  const b = Buffer.alloc(16);
  b[0] = f.bitsPerPixel;
  b[1] = f.depth;
  b[2] = f.bigEndian ? 1 : 0;
  b[3] = f.trueColour ? 1 : 0;
  f.max.forEach((m, i) => b.writeUInt16BE(m, 4 + 2 * i));
  f.shift.forEach((s, i) => (b[10 + i] = s));
  return b;
}

function decodeFormat(b: Buffer): PixelFormat {
  return {
    bitsPerPixel: b[0]!,
    depth: b[1]!,
    bigEndian: b[2] !== 0,
    trueColour: b[3] !== 0,
    max: [b.readUInt16BE(4), b.readUInt16BE(6), b.readUInt16BE(8)],
    shift: [b[10]!, b[11]!, b[12]!],
  };
}

/** One colour as the client's pixel bytes. */
function pixel(f: PixelFormat, rgb: readonly [number, number, number]): Buffer {
  let value = 0;
  for (let i = 0; i < 3; i += 1) value += Math.round((rgb[i]! * f.max[i]!) / 255) * 2 ** f.shift[i]!;
  const bytes = f.bitsPerPixel / 8;
  const b = Buffer.alloc(bytes);
  if (f.bigEndian) b.writeUIntBE(value, 0, bytes);
  else b.writeUIntLE(value, 0, bytes);
  return b;
}

const enum Phase {
  Version,
  Security,
  ClientInit,
  Messages,
}

/** Serves one client on `socket` until it closes. */
export function serveRfb(socket: Socket, text: TextConsole, name: string): void {
  const { width, height } = framebufferSize(text);
  let phase = Phase.Version;
  let pending: Buffer = Buffer.alloc(0);
  let format = SERVER_FORMAT;
  let colours = { fg: pixel(format, FOREGROUND), bg: pixel(format, BACKGROUND) };
  // Rows changed since this client's last update, and whether it waits for an incremental one.
  const dirty = new Set<number>();
  let waiting = false;

  const end = () => socket.destroy();
  socket.on('error', end);

  const sendRows = (first: number, last: number) => {
    waiting = false;
    for (let row = first; row <= last; row += 1) dirty.delete(row);
    sendRect(0, first * FONT.height, width, (last - first + 1) * FONT.height);
  };

  const sendRect = (x: number, y: number, w: number, h: number) => {
    const bytes = colours.fg.length;
    const head = Buffer.alloc(16);
    head[0] = 0; // FramebufferUpdate
    head.writeUInt16BE(1, 2);
    head.writeUInt16BE(x, 4);
    head.writeUInt16BE(y, 6);
    head.writeUInt16BE(w, 8);
    head.writeUInt16BE(h, 10);
    head.writeInt32BE(ENCODING_RAW, 12);
    const body = Buffer.alloc(w * h * bytes);
    let at = 0;
    for (let py = y; py < y + h; py += 1) {
      const row = Math.floor(py / FONT.height);
      const line = py % FONT.height;
      for (let px = x; px < x + w; px += 1) {
        const { code, cursor } = text.cell(Math.floor(px / FONT.width), row);
        const glyph = code >= FONT.first && code <= FONT.last ? code - FONT.first : 0;
        const lit = ((GLYPHS[glyph * FONT.height + line]! << (px % FONT.width)) & 0x80) !== 0;
        (lit !== cursor ? colours.fg : colours.bg).copy(body, at);
        at += bytes;
      }
    }
    socket.write(Buffer.concat([head, body]));
  };

  const flush = () => {
    if (!waiting || dirty.size === 0) return;
    sendRows(Math.min(...dirty), Math.max(...dirty));
  };
  const unsubscribe = text.onChange((rows) => {
    for (const row of rows) dirty.add(row);
    flush();
  });
  socket.once('close', unsubscribe);

  const handle = (message: Buffer): boolean => {
    switch (message[0]) {
      case 0: {
        const next = decodeFormat(message.subarray(4, 20));
        if (!next.trueColour || ![8, 16, 32].includes(next.bitsPerPixel)) return false;
        format = next;
        colours = { fg: pixel(format, FOREGROUND), bg: pixel(format, BACKGROUND) };
        return true;
      }
      case 3: {
        const x = message.readUInt16BE(2);
        const y = message.readUInt16BE(4);
        const w = Math.max(0, Math.min(message.readUInt16BE(6), width - x));
        const h = Math.max(0, Math.min(message.readUInt16BE(8), height - y));
        if (message[1] === 0) {
          waiting = false;
          sendRect(Math.min(x, width), Math.min(y, height), w, h);
        } else {
          waiting = true;
          flush();
        }
        return true;
      }
      case 4:
        if (message[1] !== 0) text.key(message.readUInt32BE(4));
        return true;
      default:
        // SetEncodings (Raw is always allowed), pointer, clipboard, extensions never offered.
        return true;
    }
  };

  socket.write(RFB_VERSION);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    try {
      for (;;) {
        if (pending.length === 0) return;
        const length = phase === Phase.Version ? 12 : phase === Phase.Messages ? messageLength(pending) : 1;
        if (length === null || pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (phase === Phase.Version) {
          if (message.toString('latin1') !== RFB_VERSION) return end();
          socket.write(Buffer.from([1, SECURITY_NONE]));
          phase = Phase.Security;
        } else if (phase === Phase.Security) {
          const ok = message[0] === SECURITY_NONE;
          const result = Buffer.alloc(4);
          result.writeUInt32BE(ok ? 0 : 1);
          socket.write(result);
          if (!ok) {
            const reason = Buffer.from('only the security type None is offered');
            const length = Buffer.alloc(4);
            length.writeUInt32BE(reason.length);
            return void socket.end(Buffer.concat([length, reason]));
          }
          phase = Phase.ClientInit;
        } else if (phase === Phase.ClientInit) {
          // Every client shares the screen whatever it asks: the gateway decides who may type.
          const init = Buffer.alloc(24);
          init.writeUInt16BE(width, 0);
          init.writeUInt16BE(height, 2);
          encodeFormat(SERVER_FORMAT).copy(init, 4);
          init.writeUInt32BE(Buffer.byteLength(name), 20);
          socket.write(Buffer.concat([init, Buffer.from(name)]));
          phase = Phase.Messages;
        } else if (!handle(message)) {
          return end();
        }
      }
    } catch {
      end();
    }
  });
}
