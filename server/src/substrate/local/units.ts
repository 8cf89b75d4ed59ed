// Units of the local substrate (machines and workloads): a directory per unit under DATA_DIR/units and a
// supervised agent process (agent-process.ts). What runs is found from the files alone, so a second
// driver on the same DATA_DIR (the control plane restarted) adopts the units the first one started.
import { serialPerKey } from '../serial.js';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { UnitSignalSpec } from '../../../../generated/unit-signal.js';
import type { UnitSpec, UnitStatus } from '../driver.js';
import { isAgentOf, readAgentPid, spawnAgent, stopAgent } from './agent-process.js';
import { readIfPresent, writeFileAtomic, writeJsonAtomic } from './atomic-file.js';
import { isId, UNIT_FILES, type AgentStatus, type LocalLayout } from './layout.js';
import { existingVolume } from './volumes.js';
import { confinementProblem, removeUnitNetwork } from './sandbox/index.js';
import { removeUnitLimits } from './sandbox/limits.js';

export type DriverLog = Pick<Logger, 'info' | 'warn'>;

export interface LocalUnits {
  start(unit: UnitSpec): Promise<void>;
  stop(unitId: string): Promise<void>;
  delete(unitId: string): Promise<void>;
  status(unitId: string): Promise<UnitStatus>;
  writeSignal(unitId: string, spec: UnitSignalSpec): Promise<void>;
  readSignal(unitId: string): Promise<UnitSignalSpec | null>;
  stopAll(): Promise<void>;
}

export function localUnits(layout: LocalLayout, log?: DriverLog): LocalUnits {
  const serial = serialPerKey();

  async function runningPid(unitDir: string): Promise<number | null> {
    const pid = await readAgentPid(unitDir);
    return pid !== null && (await isAgentOf(pid, unitDir)) ? pid : null;
  }

  async function stop(unitId: string): Promise<void> {
    const dir = layout.unitDir(unitId);
    const pid = await runningPid(dir);
    if (pid === null) return;
    if (!(await stopAgent(pid, dir))) log?.warn({ unitId, pid }, 'unit agent ignored SIGTERM; killed');
    await rm(join(dir, UNIT_FILES.agentPid), { force: true });
  }

  return {
    start: (unit) =>
      serial(unit.id, async () => {
        const dir = layout.unitDir(unit.id);
        if ((await runningPid(dir)) !== null) return;
        // Never unconfined (sandbox/): a host that cannot confine runs no units.
        const problem = confinementProblem();
        if (problem) throw new Error(`This host cannot run units confined: ${problem}.`);
        // The agent runs a workload in its volume and reads a machine's image from it.
        await existingVolume(layout, unit.volumeId);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const spec: UnitSpec = {
          id: unit.id,
          kind: unit.kind,
          volumeId: unit.volumeId,
          command: unit.command ?? null,
          env: unit.env ?? {},
          address: unit.address ?? null,
          limits: unit.limits ?? null,
        };
        // 0600: a unit's environment may hold its secrets (an RCON password).
        await writeJsonAtomic(join(dir, UNIT_FILES.unit), spec, 0o600);
        const pid = await spawnAgent(dir);
        await writeFileAtomic(join(dir, UNIT_FILES.agentPid), `${pid}\n`);
        log?.info({ unitId: unit.id, pid }, 'unit agent started');
      }),

    stop: (unitId) => serial(unitId, () => stop(unitId)),

    delete: (unitId) =>
      serial(unitId, async () => {
        await stop(unitId);
        await rm(layout.unitDir(unitId), { recursive: true, force: true });
        await removeUnitNetwork(unitId).catch(() => undefined);
        removeUnitLimits(unitId);
      }),

    status: async (unitId) => {
      const dir = layout.unitDir(unitId);
      if (!(await isDirectory(dir))) return { state: 'absent', observedGeneration: null, lastError: null };
      const state = (await runningPid(dir)) === null ? 'stopped' : 'running';
      const status = await readStatus(dir);
      return {
        state,
        observedGeneration: status?.observedGeneration ?? null,
        lastError: status?.lastError ?? null,
      };
    },

    writeSignal: async (unitId, spec) => {
      const dir = layout.unitDir(unitId);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeJsonAtomic(join(dir, UNIT_FILES.signal), spec, 0o600);
    },

    readSignal: async (unitId) => {
      const text = await readIfPresent(join(layout.unitDir(unitId), UNIT_FILES.signal));
      return text === null ? null : (JSON.parse(text) as UnitSignalSpec);
    },

    stopAll: async () => {
      const ids = await unitIds(layout.unitsDir);
      await Promise.all(ids.map((id) => serial(id, () => stop(id))));
    },
  };
}

/** status.json as the agent wrote it; a missing or unreadable one says nothing yet. */
async function readStatus(unitDir: string): Promise<AgentStatus | null> {
  try {
    const text = await readIfPresent(join(unitDir, UNIT_FILES.status));
    return text === null ? null : (JSON.parse(text) as AgentStatus);
  } catch {
    return null;
  }
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function unitIds(unitsDir: string): Promise<string[]> {
  try {
    const entries = await readdir(unitsDir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory() && isId(entry.name)).map((entry) => entry.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
