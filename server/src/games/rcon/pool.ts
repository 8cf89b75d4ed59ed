// One RCON connection per game server in this process, reused by every request (document 2 §4 "Game
// servers"): commands queue on it one at a time (RconClient), so a burst of roster calls never opens a
// burst of connections (MC-72390). A changed address or password replaces the client; an idle one is
// closed so a stopped server's socket is not kept.
import { RconClient } from './client.js';

const IDLE_MS = 60_000;

interface Entry {
  key: string;
  client: RconClient;
  idle: NodeJS.Timeout;
}

export interface RconTarget {
  host: string;
  port: number;
  password: string;
}

export class RconPool {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly timeouts: { connectTimeoutMs?: number; commandTimeoutMs?: number } = {}) {}

  /** The client of server `id` at `target`, made on first use. */
  client(id: string, target: RconTarget): RconClient {
    const key = `${target.host}\0${target.port}\0${target.password}`;
    let entry = this.#entries.get(id);
    if (entry && entry.key !== key) {
      this.#forget(id, entry);
      entry = undefined;
    }
    if (!entry) {
      const client = new RconClient({ ...target, ...this.timeouts });
      entry = { key, client, idle: this.#idleTimer(id) };
      this.#entries.set(id, entry);
    } else {
      entry.idle.refresh();
    }
    return entry.client;
  }

  close(): void {
    for (const [id, entry] of this.#entries) this.#forget(id, entry);
  }

  #idleTimer(id: string): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const entry = this.#entries.get(id);
      if (entry) this.#forget(id, entry);
    }, IDLE_MS);
    timer.unref();
    return timer;
  }

  #forget(id: string, entry: Entry): void {
    clearTimeout(entry.idle);
    entry.client.close();
    if (this.#entries.get(id) === entry) this.#entries.delete(id);
  }
}
