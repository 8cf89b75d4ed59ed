// A machine's screen (DECISIONS.md §6 "Screen"): a real X server, Xvnc from Debian's
// tigervnc-standalone-server, run by the machine's agent for as long as the machine runs, showing its
// console (the line its SSH sessions answer, and the image installed) in an X window.
//
// Where it listens: RFB only on a unix socket in a private directory (0700, under the system's temp
// directory: a unix socket path must be short), mode 0600, and no TCP port (-rfbport -1): only this user,
// the gateway's, reaches it, so the security type is None (the gateway checked the ticket). screen.json
// in the unit's directory names that directory. Its X display (a free number Xvnc picks itself, -displayfd) takes no TCP and needs
// the MIT cookie written beside it, so no other local user can draw on it or read it. Every RFB client
// is shared (-AlwaysShared): a viewer's non-shared ClientInit never disconnects the others.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES } from '../substrate/local/layout.js';
import { runsWithArg, signal, waitUntil } from '../substrate/local/proc.js';
import { findProgram } from '../substrate/local/programs.js';
import { readScreenEndpoint, SCREEN_SOCKET, type ScreenEndpoint } from '../substrate/local/screen.js';
import type { AgentLog } from './log.js';
import { startTextScreen } from './text-screen.js';
import { startConfinedScreen } from './confined-screen.js';
import type { UnitConfinement } from '../substrate/local/sandbox/index.js';

export const SCREEN_GEOMETRY = { width: 1024, height: 768 };
const START_TIMEOUT_MS = 15_000;

export interface MachineScreen {
  close(): Promise<void>;
}

/**
 * Starts the machine's Xvnc and its console window, or the built-in text screen where Xvnc is not
 * installed (text-screen.ts; the local substrate's `framebuffer` capability says which); null when Xvnc
 * is installed but cannot start.
 */
export async function startMachineScreen(
  machine: { id: string; unitDir: string; consoleText: string; substrate: string },
  log: AgentLog,
  confinement: UnitConfinement | null = null,
): Promise<MachineScreen | null> {
  await endOrphanScreen(machine.unitDir);
  const xvnc = findProgram('Xvnc');
  if (!xvnc) return startTextScreen(machine, log);
  if (confinement)
    return startConfinedScreen(machine, confinement, SCREEN_GEOMETRY, xauthority(randomBytes(16)), log);
  const dir = await mkdtemp(join(tmpdir(), 'svc-screen-'));
  const socketPath = join(dir, SCREEN_SOCKET);
  const authority = join(dir, 'xauthority');
  await writeFile(authority, xauthority(randomBytes(16)), { mode: 0o600 });

  // prettier-ignore
  const server = spawn(xvnc, [
    '-displayfd', '3',
    '-rfbunixpath', socketPath, '-rfbunixmode', '0600', '-rfbport', '-1',
    '-SecurityTypes', 'None', '-AlwaysShared',
    '-nolisten', 'tcp', '-auth', authority,
    '-geometry', `${SCREEN_GEOMETRY.width}x${SCREEN_GEOMETRY.height}`, '-depth', '24',
    '-desktop', `machine ${machine.id}`,
  ], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  server.on('error', () => undefined);
  const display = await displayNumber(server).catch((err: unknown) => {
    log.warn(`screen: Xvnc did not start: ${err instanceof Error ? err.message : String(err)}`);
    server.kill('SIGKILL');
    return null;
  });
  if (display === null || !server.pid) {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  const endpointFile = join(machine.unitDir, UNIT_FILES.screen);
  await writeJsonAtomic(endpointFile, { dir, pid: server.pid } satisfies ScreenEndpoint, 0o600);
  log.info(`screen: Xvnc on display :${display}, RFB on a private unix socket`);

  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', DISPLAY: `:${display}`, XAUTHORITY: authority };
  const clients: ChildProcess[] = [];
  const run = (program: string, args: string[]) => {
    const file = findProgram(program);
    if (!file) return;
    const child = spawn(file, args, { env, stdio: 'ignore' });
    child.on('error', () => undefined);
    clients.push(child);
  };
  run('xsetroot', ['-solid', '#1d2330']);
  // The console as text (x11-utils' xmessage; without it, the bare X display).
  // prettier-ignore
  run('xmessage', ['-geometry', '+24+24', '-buttons', '', '-fn', 'fixed', '-bg', 'black', '-fg', '#c0c0c0', machine.consoleText]);

  return {
    close: async () => {
      for (const child of clients) child.kill('SIGTERM');
      server.kill('SIGTERM');
      const gone = () => Promise.resolve(server.exitCode !== null || server.signalCode !== null);
      if (!(await waitUntil(gone, 3_000))) server.kill('SIGKILL');
      await rm(endpointFile, { force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The display number Xvnc writes on fd 3 once it accepts clients. */
function displayNumber(server: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const pipe = server.stdio[3] as NodeJS.ReadableStream | null;
    if (!pipe) return reject(new Error('no display pipe'));
    let text = '';
    const timer = setTimeout(() => reject(new Error('timed out')), START_TIMEOUT_MS);
    pipe.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /^(\d+)\n/.exec(text);
      if (!match) return;
      clearTimeout(timer);
      resolve(Number(match[1]));
    });
    server.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}`));
    });
  });
}

/**
 * An Xauthority file of one MIT-MAGIC-COOKIE-1 for any address and display (FamilyWild, empty address
 * and number): Xvnc loads it as its cookie, and its X clients find it for whatever display it picked.
 */
function xauthority(cookie: Buffer): Buffer {
  const field = (data: Buffer) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(data.length);
    return Buffer.concat([length, data]);
  };
  const family = Buffer.from([0xff, 0xff]);
  return Buffer.concat([
    family,
    field(Buffer.alloc(0)),
    field(Buffer.alloc(0)),
    field(Buffer.from('MIT-MAGIC-COOKIE-1')),
    field(cookie),
  ]);
}

/** An Xvnc a previous agent of this machine left running (it died with -9) is ended, its directory removed. */
async function endOrphanScreen(unitDir: string): Promise<void> {
  const endpoint = await readScreenEndpoint(unitDir);
  if (!endpoint || !endpoint.dir.startsWith(join(tmpdir(), 'svc-screen-'))) return;
  const socketPath = join(endpoint.dir, SCREEN_SOCKET);
  if (await runsWithArg(endpoint.pid, socketPath)) {
    signal(endpoint.pid, 'SIGKILL');
    await waitUntil(async () => !(await runsWithArg(endpoint.pid, socketPath)), 3_000);
  }
  await rm(endpoint.dir, { recursive: true, force: true });
  await rm(join(unitDir, UNIT_FILES.screen), { force: true });
}
