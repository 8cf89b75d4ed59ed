// Where the local substrate keeps things under DATA_DIR (SUBSTRATE.md, DECISIONS.md §5). The driver and
// the unit agent both read this: the driver writes a unit and its contract, the agent acknowledges it.
//
//   DATA_DIR/volumes/<volumeId>/          a volume: the workload's files, a machine's rootfs/
//   DATA_DIR/volumes/.<volumeId>.*        a restore in progress beside it (local/snapshots.ts)
//   DATA_DIR/snapshots/<volumeId>/<snapshotId>.tar.zst   a snapshot: the volume as a zstd tar archive
//   DATA_DIR/units/<unitId>/unit.json     the UnitSpec the agent runs
//                          unit-signal.json  the contract (UnitSignal spec), written by the platform
//                          status.json    the agent's acknowledgement (AgentStatus)
//                          applied/       what the agent last accepted: contract.json, public-endpoints.json
//                          agent.pid, agent.log, workload.pid, console.json
//                          screen.json (a machine's Xvnc), sandbox.json (agent/confined.ts)
import { join, resolve } from 'node:path';
import type { UnitSignalError } from '../driver.js';

export const UNIT_FILES = {
  unit: 'unit.json',
  signal: 'unit-signal.json',
  status: 'status.json',
  agentPid: 'agent.pid',
  agentLog: 'agent.log',
  /** The workload process and its process group, so a successor agent can end an orphan. */
  workloadPid: 'workload.pid',
  /** Where the workload's console is reached (agent/console.ts), mode 0600. */
  console: 'console.json',
  /** A machine's screen: where its Xvnc's RFB socket is, and Xvnc's pid (agent/screen.ts), mode 0600. */
  screen: 'screen.json',
  /** The confined program's reaper, whose namespaces shells join (agent/confined.ts), mode 0600. */
  sandbox: 'sandbox.json',
  appliedDir: 'applied',
  appliedContract: join('applied', 'contract.json'),
  appliedEndpoints: join('applied', 'public-endpoints.json'),
} as const;

/** A machine's root filesystem on its volume, and the file naming the image installed there. */
export const ROOTFS = 'rootfs';
export const IMAGE_FILE = join(ROOTFS, 'etc', 'svc-image');

/** status.json, written by the agent after the files of a generation are written. */
export interface AgentStatus {
  observedGeneration: number | null;
  lastError: { generation: number; errors: UnitSignalError[] } | null;
  /** Machines only: the image on the volume (null: none installed). */
  osImage?: string | null;
  agentPid: number;
  updatedAt: string;
}

// Ids become path segments: a leading character other than a dot keeps out `.`, `..` and hidden names.
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isId(id: string): boolean {
  return ID.test(id);
}

export function checkId(kind: 'unit' | 'volume' | 'snapshot', id: string): string {
  if (!isId(id)) throw new Error(`invalid ${kind} id ${JSON.stringify(id)}: expected ${String(ID)}`);
  return id;
}

export interface LocalLayout {
  dataDir: string;
  volumesDir: string;
  unitsDir: string;
  snapshotsDir: string;
  volumeDir(volumeId: string): string;
  unitDir(unitId: string): string;
  /** The archive of a snapshot of the volume. */
  snapshotFile(volumeId: string, snapshotId: string): string;
}

export function localLayout(dataDir: string): LocalLayout {
  const root = resolve(dataDir);
  const volumesDir = join(root, 'volumes');
  const unitsDir = join(root, 'units');
  const snapshotsDir = join(root, 'snapshots');
  return {
    dataDir: root,
    volumesDir,
    unitsDir,
    snapshotsDir,
    snapshotFile: (volumeId, snapshotId) =>
      join(snapshotsDir, checkId('volume', volumeId), `${checkId('snapshot', snapshotId)}.tar.zst`),
    volumeDir: (id) => join(volumesDir, checkId('volume', id)),
    unitDir: (id) => join(unitsDir, checkId('unit', id)),
  };
}

/** The agent knows only its unit directory; DATA_DIR is two levels up. */
export function layoutOfUnitDir(unitDir: string): LocalLayout {
  return localLayout(resolve(unitDir, '..', '..'));
}
