// A machine's screen where the host has no Xvnc (DECISIONS.md §6 "Screen": "otherwise a built-in RFB
// server that draws the machine's text console"): the machine's console as text (text-console.ts) drawn
// in a bitmap font and served as RFB 3.8 (rfb-server.ts). It runs in the machine's agent, like Xvnc,
// for as long as the machine runs, and is reached the same way: a unix socket in a private directory
// (0700, the socket 0600) that screen.json names. So the gateway's part is the same for both (its
// bridge drops a watcher's input before it reaches either), the console keeps what was typed across
// viewers and gateway restarts, and no byte of it passes through the API.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES } from '../substrate/local/layout.js';
import { SCREEN_SOCKET, type ScreenEndpoint } from '../substrate/local/screen.js';
import type { AgentLog } from './log.js';
import { serveRfb } from './rfb-server.js';
import { TextConsole } from './text-console.js';

/** 80 columns by 30 rows of the 8x13 font: 640x390 pixels. */
export const TEXT_SCREEN = { columns: 80, rows: 30 } as const;

export interface TextScreen {
  close(): Promise<void>;
}

export async function startTextScreen(
  machine: { id: string; unitDir: string; consoleText: string; substrate: string },
  log: AgentLog,
): Promise<TextScreen> {
  const text = new TextConsole(
    machine.consoleText,
    TEXT_SCREEN.columns,
    TEXT_SCREEN.rows,
    () => `This machine has no operating system to log in to (${machine.substrate} substrate).`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'svc-screen-'));
  const socketPath = join(dir, SCREEN_SOCKET);
  const viewers = new Set<Socket>();
  const server = createServer((socket) => {
    viewers.add(socket);
    socket.once('close', () => viewers.delete(socket));
    serveRfb(socket, text, `machine ${machine.id}`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await chmod(socketPath, 0o600);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const endpointFile = join(machine.unitDir, UNIT_FILES.screen);
  await writeJsonAtomic(endpointFile, { dir, pid: process.pid } satisfies ScreenEndpoint, 0o600);
  log.info('screen: the built-in text screen (no Xvnc on this host), RFB on a private unix socket');
  return {
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Open viewers end with the machine.
      for (const socket of viewers) socket.destroy();
      await closed;
      await rm(endpointFile, { force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
