// What an attached console viewer costs the gateway (issue 19): 500 idle viewers on one workload's
// console, each a real `ws` WebSocket to the gateway's bridge (gateway/console-bridge.ts) with its own
// socket to the agent's console hub (agent/console.ts), the hub and the bridge in processes of their own
// as in the platform (console.ts's `unit` and `bridge` roles). Reported: the bridge process's RSS per
// viewer, (RSS with the viewers - idle RSS) / viewers, the idle RSS measured in the same run, each after
// a full GC; and the heap's share of it. Tickets are left out (they are spent at the upgrade and kept by
// nobody).
//
//   npx tsx scripts/bench/console-viewers.ts      (also a section of `npm run bench`)
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startBridge, startUnit } from './console.js';

const VIEWERS = 500;
/** Attached at most this many at once (the agent's socket backlog is the system's default). */
const OPENING = 50;
/** The workload prints nothing and waits: the viewers are idle. */
const IDLE = ['/bin/cat'];

interface Memory {
  rss: number;
  heapUsed: number;
}

export interface ViewersMeasure {
  viewers: number;
  idle: Memory;
  attached: Memory;
}

async function memoryOf(url: string): Promise<Memory> {
  const res = await fetch(`${url.replace(/^ws:/, 'http:')}/memory`);
  return (await res.json()) as Memory;
}

async function attach(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, 'open');
  return ws;
}

export async function measureViewers(viewers = VIEWERS): Promise<ViewersMeasure> {
  const unit = await startUnit(IDLE);
  const bridge = await startBridge(unit.dir);
  const sockets: WebSocket[] = [];
  try {
    // One viewer first, so the idle figure includes what the first socket loads once (ws's code paths).
    sockets.push(await attach(bridge.url));
    await new Promise((r) => setTimeout(r, 200));
    const idle = await memoryOf(bridge.url);
    while (sockets.length < viewers + 1) {
      const batch = Math.min(OPENING, viewers + 1 - sockets.length);
      sockets.push(...(await Promise.all(Array.from({ length: batch }, () => attach(bridge.url)))));
    }
    await new Promise((r) => setTimeout(r, 500));
    const attached = await memoryOf(bridge.url);
    if (sockets.some((ws) => ws.readyState !== ws.OPEN)) throw new Error('a viewer was disconnected');
    return { viewers, idle, attached };
  } finally {
    for (const ws of sockets) ws.terminate();
    await bridge.close();
    await unit.close();
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export function describeViewers(m: ViewersMeasure): string[] {
  const perViewer = (m.attached.rss - m.idle.rss) / m.viewers;
  const heapPerViewer = (m.attached.heapUsed - m.idle.heapUsed) / m.viewers;
  return [
    `  ${m.viewers} idle attached viewers: gateway bridge RSS ${mib(m.attached.rss)} against ${mib(m.idle.rss)} idle (same run): ${kib(perViewer)} per viewer, ${(perViewer / m.idle.rss).toFixed(4)} of the idle RSS each (of which JS heap ${kib(heapPerViewer)})`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${describeViewers(await measureViewers()).join('\n')}\n`);
  process.exit(0);
}
