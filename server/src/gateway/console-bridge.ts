// A viewer's socket on the workload's command console (DECISIONS.md §6): binary frames carry the console's
// bytes both ways, text frames are dropped. The stream from the substrate starts with the scrollback (the
// agent keeps it, so every viewer of every gateway sees the same session).
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { CLOSE } from './close-codes.js';

/** Output waits while this much is queued for the viewer, and goes on below the low mark. */
const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** The largest frame a turn's reads are gathered into. */
const BATCH_BYTES = 256 * 1024;

/**
 * Sends what `stream` gives to `ws` as binary frames, pausing the stream while more than `highWater`
 * waits for the viewer (a slow viewer holds the source back instead of growing this process), and
 * closes the socket with `ended` when the stream ends. Used by the console and the screen.
 */
export function forwardOutput(
  ws: WebSocket,
  stream: Duplex,
  ended: string,
  { highWater, lowWater }: { highWater: number; lowWater: number },
): void {
  let paused = false;
  const sent = () => {
    if (paused && ws.bufferedAmount < lowWater) {
      paused = false;
      stream.resume();
    }
  };
  // What arrives in one turn of the event loop leaves as one frame (up to BATCH_BYTES): one header and
  // one write instead of one per read, and fewer messages for the viewer to take apart.
  let batch: Buffer[] = [];
  let batched = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const message = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched);
    batch = [];
    batched = 0;
    if (ws.readyState !== ws.OPEN) return;
    ws.send(message, { binary: true }, sent);
    if (!paused && ws.bufferedAmount > highWater) {
      paused = true;
      stream.pause();
    }
  };
  stream.on('data', (chunk: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    if (batch.length === 0) setImmediate(flush);
    batch.push(chunk);
    batched += chunk.length;
    if (batched >= BATCH_BYTES) flush();
  });
  stream.on('error', () => undefined);
  stream.once('close', () => {
    flush();
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(CLOSE.ended, ended);
  });
}

export function bridgeConsole(ws: WebSocket, stream: Duplex): void {
  forwardOutput(ws, stream, 'console ended', { highWater: HIGH_WATER, lowWater: LOW_WATER });
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    // Seed: "non-binary frames are dropped".
    if (isBinary && !stream.destroyed) stream.write(data);
  });
  ws.once('close', () => stream.destroy());
}
