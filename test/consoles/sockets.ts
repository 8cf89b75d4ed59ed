// Real `ws` clients for the gateway tests: a reader that collects a console's bytes and waits for text in
// them, the close a socket ends with, and the HTTP status of a refused upgrade.
import WebSocket from 'ws';

export class ConsoleReader {
  readonly #chunks: Buffer[] = [];
  readonly #waiters = new Set<() => void>();
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return;
      this.#chunks.push(Buffer.from(data));
      for (const wake of this.#waiters) wake();
    });
  }
  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
  get text(): string {
    return this.bytes().toString('utf8');
  }
  /** Resolves once `needle` is in what arrived; rejects after `timeoutMs` saying what did arrive. */
  waitFor(needle: string, timeoutMs = 15_000): Promise<void> {
    if (this.text.includes(needle)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`"${needle}" did not arrive; got: ${JSON.stringify(this.text.slice(-500))}`));
      }, timeoutMs);
      const check = () => {
        if (!this.text.includes(needle)) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      this.#waiters.add(check);
    });
  }
}

export function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
}

/** The HTTP status the gateway refused an upgrade with (throws if it accepted). */
export function refusedStatus(
  url: string,
  options: { origin?: string; protocols?: string[] } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], options.origin ? { origin: options.origin } : {});
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the gateway accepted the socket'));
    });
    ws.once('error', (err) => reject(err));
  });
}
