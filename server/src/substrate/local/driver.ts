// The local substrate (SUBSTRATE=local): everything on this machine, no root needed. Volumes are
// directories, machines and workloads are agent processes, images are small root filesystems. It is
// real, not a mock: units outlive the control plane and are adopted by the next one.
import { localUnitUsage } from './usage.js';
import type { SubstrateDriver } from '../driver.js';
import { checkMachineAccess, resetMachineAccess, writeMachineAccess } from './access.js';
import { localCapabilities } from './capabilities.js';
import { openConsole } from './console.js';
import { VolumeFiles, VolumeImportTarget, type OwnedVolumeRoot } from './files/index.js';
import { openScreen } from './screen.js';
import { offeredShells, shellCommand } from './shell.js';
import { startPty } from './pty.js';
import { readUnit } from '../../agent/unit.js';
import { installedImage, installImage } from './images.js';
import { localLayout } from './layout.js';
import { createSnapshot, deleteSnapshot, restoreSnapshot } from './snapshots.js';
import { localUnits, type DriverLog } from './units.js';
import { deleteVolume, ensureVolume, wipeVolume } from './volumes.js';

/**
 * A volume whose files belong to its unit's host ids (sandbox/idmap.ts): what the file layer makes there
 * is given to the owner of the volume's root, so the unit's confined programs may change it.
 */
function ownedRoot(dir: string): OwnedVolumeRoot {
  return { resolve: async () => dir };
}

export interface LocalDriverOptions {
  /** DATA_DIR: volumes/ and units/ live under it. */
  dataDir: string;
  log?: DriverLog;
}

export interface LocalDriver extends SubstrateDriver {
  readonly name: 'local';
  /** Whether the machine on the volume accepts this password (what the platform set). */
  checkMachineAccess(volumeId: string, username: string, password: string): Promise<boolean>;
}

export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const layout = localLayout(options.dataDir);
  const units = localUnits(layout, options.log);
  return {
    name: 'local',
    capabilities: localCapabilities,

    ensureVolume: (volume) => ensureVolume(layout, volume),
    deleteVolume: (volumeId) => deleteVolume(layout, volumeId),
    wipeVolume: (volumeId) => wipeVolume(layout, volumeId),
    installImage: (volumeId, imageId) => installImage(layout, volumeId, imageId),
    installedImage: (volumeId) => installedImage(layout, volumeId),
    resetMachineAccess: (unitId, volumeId, credentials) => resetMachineAccess(layout, unitId, volumeId, credentials),
    setMachineAccess: (unitId, volumeId, credentials) => writeMachineAccess(layout, unitId, volumeId, credentials),
    checkMachineAccess: (volumeId, username, password) =>
      checkMachineAccess(layout.volumeDir(volumeId), username, password),

    createSnapshot: (snapshot, transfer) => createSnapshot(layout, snapshot, transfer),
    restoreSnapshot: (snapshot, expected, transfer) => restoreSnapshot(layout, snapshot, expected, transfer),
    deleteSnapshot: (snapshot) => deleteSnapshot(layout, snapshot),

    startUnit: (unit) => units.start(unit),
    stopUnit: (unitId) => units.stop(unitId),
    deleteUnit: (unitId) => units.delete(unitId),
    unitStatus: (unitId) => units.status(unitId),
    // status.json is a local file: reading it costs next to nothing.
    unitState: async (unitId) => (await units.status(unitId)).state,
    unitUsage: async (unitId, volumeId) =>
      (await units.status(unitId)).state === 'running'
        ? localUnitUsage(unitId, layout.unitDir(unitId), volumeId ? layout.volumeDir(volumeId) : null)
        : null,
    openConsole: (unitId) => openConsole(layout.unitDir(unitId)),
    openScreen: (unitId) => openScreen(layout.unitDir(unitId)),
    offeredShells,
    openShell: async (unitId, shells, size) => {
      if ((await units.status(unitId)).state !== 'running') return null;
      const unit = await readUnit(layout.unitDir(unitId));
      const command = await shellCommand(layout, unit, shells);
      return command ? startPty(command, size) : null;
    },
    exposePorts: async () => undefined,
    volumeFiles: (volumeId) => new VolumeFiles(ownedRoot(layout.volumeDir(volumeId))),
    volumeImportTarget: (volumeId) => new VolumeImportTarget(ownedRoot(layout.volumeDir(volumeId))),
    writeUnitSignal: (unitId, spec) => units.writeSignal(unitId, spec),
    readUnitSignal: (unitId) => units.readSignal(unitId),

    // The driver holds no timers or handles: agents are detached and the files are the state.
    close: async ({ stopUnits = false } = {}) => {
      if (stopUnits) await units.stopAll();
    },
  };
}
