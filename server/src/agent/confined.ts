// How the agent of a local unit starts the unit's programs: confined (substrate/local/sandbox/), each
// launch recorded in sandbox.json so the gateway's shells can join the program's namespaces. The agent
// itself stays outside, supervising: it holds the console's pipes, restarts the program, and ends it.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES } from '../substrate/local/layout.js';
import {
  sandboxProcesses,
  spawnSandboxed,
  type SandboxOptions,
  type UnitConfinement,
} from '../substrate/local/sandbox/index.js';
import { insidePath } from '../substrate/local/sandbox/runtime.js';
import { waitUntil } from '../substrate/local/proc.js';
import type { Launch } from './workload.js';

/** sandbox.json: the running program's reaper (pid 1 inside), whose namespaces a shell joins. */
export interface SandboxRecord {
  init: number;
  /** The unit's first host id (its root), so a joiner can tell the reaper is still the unit's. */
  base: number;
}

export function confinedLaunch(
  unit: { id: string; unitDir: string },
  confinement: UnitConfinement,
  extra: Pick<SandboxOptions, 'capabilities' | 'hostname' | 'tmpfs' | 'hostEtc'> = {},
): Launch {
  const record = join(unit.unitDir, UNIT_FILES.sandbox);
  return (command, { env, stdio }) => {
    const sandboxed = spawnSandboxed({
      unitId: unit.id,
      root: confinement.root,
      range: confinement.range,
      network: confinement.network,
      cgroups: confinement.cgroups,
      command: command.map(insidePath),
      env: Object.fromEntries(
        Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'),
      ),
      stdio: stdio === 'pipe' ? ['pipe', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
      ...extra,
    });
    // Recorded once the program runs: bwrap's reaper forks it only after `/` is the unit's, so a shell
    // joining the reaper never sees the host's root.
    sandboxed.init.then(
      async (init) => {
        if (!(await waitUntil(async () => (await sandboxProcesses(init)).length > 0, 10_000))) return;
        await writeJsonAtomic(record, { init, base: confinement.range.base } satisfies SandboxRecord, 0o600);
      },
      () => undefined,
    );
    sandboxed.child.once('exit', () => void rm(record, { force: true }));
    return { child: sandboxed.child, inner: async () => sandboxProcesses(await sandboxed.init) };
  };
}
