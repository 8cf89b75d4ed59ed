// A local machine's screen, confined (DECISIONS.md §8 "Confinement"): Xvnc and its two X clients run in
// one sandbox of the unit's (its host ids, no network but its own loopback, its own PID, IPC and mount
// namespaces), whose `/` is a private directory of the agent's: display :0 is then always free, the X
// socket is in the sandbox's own /tmp, and the RFB socket is /rfb.sock there. The gateway reaches that
// socket through the sandbox's reaper, /proc/PID/root/rfb.sock (substrate/local/screen.ts), so the path
// is resolved inside the sandbox: should Xvnc ever put a link in its place, it leads nowhere outside.
import { chown, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES } from '../substrate/local/layout.js';
import { waitUntil } from '../substrate/local/proc.js';
import { spawnSandboxed, SANDBOX_PATH, type UnitConfinement } from '../substrate/local/sandbox/index.js';
import { SCREEN_SOCKET, type ScreenEndpoint } from '../substrate/local/screen.js';
import type { AgentLog } from './log.js';
import type { MachineScreen } from './screen.js';

const START_TIMEOUT_MS = 15_000;

const SCRIPT = `Xvnc :0 -rfbunixpath /${SCREEN_SOCKET} -rfbunixmode 0600 -rfbport -1 -SecurityTypes None -AlwaysShared \\
  -nolisten tcp -auth /xauthority -geometry "$GEOMETRY" -depth 24 -desktop "$DESKTOP" &
server=$!
i=0
while [ ! -S /tmp/.X11-unix/X0 ] && [ "$i" -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
export DISPLAY=:0 XAUTHORITY=/xauthority
command -v xsetroot >/dev/null && xsetroot -solid '#1d2330'
command -v xmessage >/dev/null && xmessage -geometry +24+24 -buttons '' -fn fixed -bg black -fg '#c0c0c0' "$CONSOLE_TEXT" &
wait "$server"
`;

export async function startConfinedScreen(
  machine: { id: string; unitDir: string; consoleText: string },
  confinement: UnitConfinement,
  geometry: { width: number; height: number },
  authority: Buffer,
  log: AgentLog,
): Promise<MachineScreen | null> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-screen-'));
  const { base } = confinement.range;
  await chown(dir, base, base);
  await writeFile(join(dir, 'xauthority'), authority, { mode: 0o600 });
  await chown(join(dir, 'xauthority'), base, base);
  const sandbox = spawnSandboxed({
    unitId: machine.id,
    root: dir,
    range: confinement.range,
    network: false,
    hostEtc: true,
    cgroups: confinement.cgroups,
    command: ['/bin/sh', '-c', SCRIPT],
    env: {
      PATH: SANDBOX_PATH,
      HOME: '/',
      GEOMETRY: `${geometry.width}x${geometry.height}`,
      DESKTOP: `machine ${machine.id}`,
      CONSOLE_TEXT: machine.consoleText,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const ended = new Promise<void>((resolve) => sandbox.child.once('exit', () => resolve()));
  const stop = async () => {
    sandbox.child.kill('SIGKILL');
    await ended;
    await rm(dir, { recursive: true, force: true });
  };
  let init: number;
  try {
    init = await sandbox.init;
  } catch (err) {
    log.warn(`screen: Xvnc's sandbox did not start: ${err instanceof Error ? err.message : String(err)}`);
    await stop();
    return null;
  }
  const socket = `/proc/${init}/root/${SCREEN_SOCKET}`;
  const listening = await waitUntil(
    () =>
      stat(socket).then(
        (s) => s.isSocket(),
        () => false,
      ),
    START_TIMEOUT_MS,
  );
  if (!listening) {
    log.warn('screen: Xvnc did not start');
    await stop();
    return null;
  }
  const endpointFile = join(machine.unitDir, UNIT_FILES.screen);
  await writeJsonAtomic(endpointFile, { dir, pid: init, confined: true } satisfies ScreenEndpoint, 0o600);
  log.info('screen: Xvnc on display :0 in its sandbox, RFB on a private unix socket');
  return {
    close: async () => {
      await rm(endpointFile, { force: true });
      await stop();
    },
  };
}
