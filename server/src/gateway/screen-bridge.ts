// A viewer's socket on a machine's screen (DECISIONS.md §6 "Screen"): binary frames carry RFB 3.8 both
// ways between the client (noVNC) and the machine's RFB server. The server's bytes pass as they come;
// the client's are cut into messages (rfb-input.ts) so that input from a socket that does not belong
// to the hold's session is dropped: watchers stay read-only. A text frame is dropped; a malformed or
// unknown client message closes the socket (1002), one over 1 MiB with 1009.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { CLOSE } from './close-codes.js';
import { forwardOutput } from './console-bridge.js';
import { RfbClientParser, RfbMessageTooLarge } from './rfb-input.js';

/** Output waits while this much is queued for the viewer, and goes on below the low mark. */
const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;

export function bridgeScreen(ws: WebSocket, stream: Duplex, holds: () => boolean): void {
  forwardOutput(ws, stream, 'screen ended', { highWater: HIGH_WATER, lowWater: LOW_WATER });
  const parser = new RfbClientParser();
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || stream.destroyed) return;
    try {
      for (const message of parser.push(Buffer.from(data))) {
        if (message.kind === 'input' && !holds()) continue;
        stream.write(message.bytes);
      }
    } catch (err) {
      const tooLarge = err instanceof RfbMessageTooLarge;
      ws.close(tooLarge ? CLOSE.tooLarge : CLOSE.protocol, tooLarge ? 'message too large' : 'not RFB 3.8');
      stream.destroy();
    }
  });
  ws.once('close', () => stream.destroy());
}
