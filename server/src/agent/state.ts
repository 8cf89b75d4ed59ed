// What the agent keeps on disk: the contract in force (applied/) and its acknowledgement (status.json).
// Both survive the agent, so a restarted one refuses a generation lower than one it acknowledged before.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';
import { readIfPresent, writeFileAtomic, writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { UNIT_FILES, type AgentStatus } from '../substrate/local/layout.js';

export interface AgentState {
  observedGeneration: number | null;
  lastError: AgentStatus['lastError'];
  applied: UnitSignalSpec | null;
}

export async function loadState(unitDir: string): Promise<AgentState> {
  const status = await readJson<Partial<AgentStatus>>(join(unitDir, UNIT_FILES.status));
  const observed = status?.observedGeneration;
  return {
    observedGeneration: typeof observed === 'number' && Number.isInteger(observed) ? observed : null,
    lastError: status?.lastError ?? null,
    applied: await readJson<UnitSignalSpec>(join(unitDir, UNIT_FILES.appliedContract)),
  };
}

/** Writes the accepted contract and the endpoints it gives the workload (before acknowledging it). */
export async function writeApplied(
  unitDir: string,
  spec: UnitSignalSpec,
  endpointsJson: string,
): Promise<void> {
  await mkdir(join(unitDir, UNIT_FILES.appliedDir), { recursive: true, mode: 0o700 });
  await writeJsonAtomic(join(unitDir, UNIT_FILES.appliedContract), spec);
  await writeFileAtomic(join(unitDir, UNIT_FILES.appliedEndpoints), `${endpointsJson}\n`);
}

export async function writeStatus(
  unitDir: string,
  state: AgentState,
  osImage?: string | null,
): Promise<void> {
  const status: AgentStatus = {
    observedGeneration: state.observedGeneration,
    lastError: state.lastError,
    ...(osImage === undefined ? {} : { osImage }),
    agentPid: process.pid,
    updatedAt: new Date().toISOString(),
  };
  await writeJsonAtomic(join(unitDir, UNIT_FILES.status), status);
}

async function readJson<T>(file: string): Promise<T | null> {
  const text = await readIfPresent(file);
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    // Written atomically, so only a damaged disk gets here: start as if it were not there.
    return null;
  }
}
