// The LXD substrate (SUBSTRATE=lxd): units are instances of an LXD (or Incus) cluster, volumes are custom
// storage volumes, snapshots are LXD's. Every call converges when run again after a job died half way.
//
// Names: instances and volumes are `<prefix><id>` in the configured project (instance names must be host
// names, so an id's other characters become `-`). A contract written before its unit's instance exists is
// kept under DATA_DIR/lxd/pending/ and pushed into the instance when it is created.
import { lxdUnitUsage } from './usage.js';
import { lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { UnitSignalSpec } from '../../../../generated/unit-signal.js';
import type { SubstrateDriver, UnitSpec, UnitStatus } from '../driver.js';
import { resetMachineAccess, writeMachineAccess } from '../local/access.js';
import { writeJsonAtomic } from '../local/atomic-file.js';
import { installedImage, installImage } from '../local/images.js';
import { FileLayerError, VolumeFiles, VolumeImportTarget, type OwnedVolumeRoot } from '../local/files/index.js';
import { checkId, ROOTFS, UNIT_FILES, type AgentStatus, type LocalLayout } from '../local/layout.js';
import { serialPerKey } from '../serial.js';
import { lxdCapabilities } from './capabilities.js';
import { LxdClient, type LxdConnection } from './client.js';
import { ensureUnitImage, workloadInImage, type UnitImage } from './image.js';
import { everyMemberOnline, memberOnline } from './placement.js';
import { portDevices, PRIVATE, setPortDevices } from './ports.js';
import { openLxdConsole } from './console.js';
import { openLxdScreen } from './screen.js';
import { LXD_SHELLS, openLxdShell } from './shell.js';
import {
  deleteInstance,
  execIn,
  findInstance,
  listedInstance,
  readInstanceFile,
  setState,
  withoutNetwork,
  writeInstanceFile,
  type Instance,
} from './instances.js';
import { unitDirIn, volumeDirIn } from './paths.js';
import { dropSnapshot, restoreSnapshot, takeSnapshot, volumeBytes } from './snapshots.js';
import { RemoteImportTarget, RemoteVolumeFiles, RemoteVolumeMachine } from './volume-client.js';
import { volumeHosts } from './volume-host.js';
import { oneVolumeLayout } from './volume-layout.js';
import { VolumeSessions } from './volume-session.js';
import {
  createVolume,
  deleteVolume,
  findVolume,
  onMember,
  shiftToVolumeOwner,
  volumeHostDir,
  type Pool,
} from './volumes.js';

export interface LxdDriverOptions {
  connection: LxdConnection;
  /** The storage pool of volumes and instances' root disks. */
  pool: string;
  /** The cluster member new volumes (and so their units) go to; unset: spread over the online members. */
  target?: string;
  /** Prefix of the platform's instance and volume names (several platforms, or tests, share a project). */
  prefix?: string;
  /** The control plane's DATA_DIR: the image build and contracts of units not created yet. */
  dataDir: string;
  /**
   * Where the driver reaches volumes' files (LXD_VOLUME_ACCESS): `host`, their directories on this
   * machine (a member here, `dir` pool); `instance`, a volume server in the cluster's volume host
   * instances (volume-host.ts); `auto` (default), `host` over the unix socket, else `instance`.
   */
  volumeAccess?: 'auto' | 'host' | 'instance';
}

const DEFAULT_LIMITS = { 'limits.memory': '512MiB', 'limits.processes': '512' };

export function createLxdDriver(options: LxdDriverOptions): SubstrateDriver {
  const client = new LxdClient(options.connection);
  const pool: Pool = { name: options.pool, target: options.target };
  const prefix = options.prefix ?? 'svc-';
  const instanceName = (unitId: string) =>
    `${prefix}${checkId('unit', unitId).replace(/[^A-Za-z0-9-]/g, '-')}`;
  const volumeName = (volumeId: string) => `${prefix}${checkId('volume', volumeId)}`;
  const pendingFile = (unitId: string) =>
    join(options.dataDir, 'lxd', 'pending', `${checkId('unit', unitId)}.json`);

  let image: Promise<UnitImage> | null = null;
  const unitImage = () => {
    image ??= ensureUnitImage(client, join(options.dataDir, 'lxd', 'build'));
    image.catch(() => (image = null));
    return image;
  };

  const serial = serialPerKey();

  // A `dir` volume's path is fixed for its life (its member's pool source, its project and name), so it
  // is asked of LXD once rather than at every file operation: two API calls each made an import of 2,000
  // small files take 111 s and its delete_extraneous over a minute (issue 34). A path gone (the volume
  // deleted, or made again on another member) is asked again.
  const knownDirs = new Map<string, string>();
  /** The volume's directory on this machine, or null when the volume does not exist. */
  async function hostDir(volumeId: string): Promise<string | null> {
    const known = knownDirs.get(volumeId);
    if (known && (await lstat(known).then((s) => s.isDirectory(), () => false))) return known;
    knownDirs.delete(volumeId);
    const volume = await findVolume(client, pool, volumeName(volumeId));
    if (!volume) return null;
    const dir = await volumeHostDir(client, pool, volume);
    knownDirs.set(volumeId, dir);
    return dir;
  }
  async function existingHostDir(volumeId: string): Promise<string> {
    const dir = await hostDir(volumeId);
    if (!dir) throw new Error(`volume ${volumeId} does not exist`);
    return dir;
  }
  const access = options.volumeAccess ?? 'auto';
  const inCluster = access === 'instance' || (access === 'auto' && !options.connection.url.startsWith('unix:'));
  const hosts = volumeHosts({ client, pool, prefix, unitImage, serial });
  const existingVolume = async (volumeId: string) => {
    const volume = await findVolume(client, pool, volumeName(volumeId));
    if (!volume) throw new FileLayerError('not-found', 'The volume does not exist.');
    return volume;
  };
  const sessions = new VolumeSessions(async (volumeId) => hosts.openSession(await existingVolume(volumeId), volumeId));
  const onVolume = (volumeId: string) => new RemoteVolumeMachine(sessions, checkId('volume', volumeId));
  /** Before LXD deletes or restores the volume: no server holds it, and no host has it attached. */
  async function release(volumeId: string): Promise<void> {
    if (!inCluster) return;
    await sessions.drop(volumeId);
    const volume = await findVolume(client, pool, volumeName(volumeId));
    if (volume) await hosts.detach(volume, volumeId);
  }
  const volumeRoot = (volumeId: string): OwnedVolumeRoot => ({
    async resolve() {
      const dir = await hostDir(volumeId);
      // As a missing directory of the local substrate's volume.
      if (!dir) throw Object.assign(new Error(`volume ${volumeId} does not exist`), { code: 'ENOENT' });
      return dir;
    },
  });

  /** The local substrate's volume code, pointed at the one volume's directory on this machine. */
  const layoutOf = (volumeDir: string): LocalLayout => oneVolumeLayout(volumeDir, join(options.dataDir, 'lxd'));

  async function pushContract(name: string, unitId: string, spec: UnitSignalSpec, running: boolean) {
    const target = `${unitDirIn(unitId)}/${UNIT_FILES.signal}`;
    const text = `${JSON.stringify(spec)}\n`;
    if (!running) return writeInstanceFile(client, name, target, text);
    // The agent watches the file: it must never see half of it, so it arrives under another name first.
    const temp = `${unitDirIn(unitId)}/.${UNIT_FILES.signal}.tmp`;
    await writeInstanceFile(client, name, temp, text);
    const moved = await execIn(client, name, ['mv', '-f', temp, target]);
    if (moved.code !== 0)
      throw new Error(`could not place the contract of unit ${unitId} (mv exited ${moved.code})`);
  }

  async function readPending(unitId: string): Promise<UnitSignalSpec | null> {
    try {
      return JSON.parse(await readFile(pendingFile(unitId), 'utf8')) as UnitSignalSpec;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  function unitFile(unit: UnitSpec): UnitSpec {
    // The catalog's programs are bundled into the unit image; a command of this machine's files is not.
    const command = unit.program ? ['/usr/bin/node', workloadInImage(unit.program)] : (unit.command ?? null);
    return {
      id: unit.id,
      kind: unit.kind,
      volumeId: unit.volumeId,
      command: unit.kind === 'machine' ? null : command,
      env: unit.env ?? {},
      address: unit.address ?? null,
    };
  }

  async function create(unit: UnitSpec, name: string): Promise<Instance> {
    const volume = await findVolume(client, pool, volumeName(unit.volumeId));
    if (!volume) throw new Error(`volume ${unit.volumeId} does not exist`);
    const { alias } = await unitImage();
    // A volume of a `dir` pool lives on one member: its unit runs there.
    const target = onMember(volume);
    try {
      await client.run(
        'POST',
        '/1.0/instances',
        {
          name,
          type: 'container',
          source: { type: 'image', alias },
          config: {
            ...DEFAULT_LIMITS,
            'environment.SVC_UNIT_DIR': unitDirIn(unit.id),
            // What the agent names on a machine's screen and SSH banner.
            'environment.SVC_SUBSTRATE': 'lxd',
            'user.svc.unit': unit.id,
            // Where the edge forwards the unit's allocations to: its ports appear there (exposePorts).
            ...(unit.address ? { 'user.svc.address': unit.address } : {}),
          },
          devices: {
            ...(await withoutNetwork(client)),
            volume: { type: 'disk', pool: pool.name, source: volume.name, path: volumeDirIn(unit.volumeId) },
            ...(unit.address ? portDevices(PRIVATE, unit.address, unit.privatePorts ?? []) : {}),
          },
        },
        target,
      );
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
    return (await findInstance(client, name))!;
  }

  /**
   * Whether the unit runs. `direct`: every member is online, so the instance's own GET answers at once
   * (one member's answer); otherwise the cluster's listing, which answers at once for an instance whose
   * member is down (status `Error`), where a direct read would wait ~10 s and fail. The listing asks every
   * member: it costs two to four times the GET (docs/substrate.md, the bench's figures).
   */
  async function unitState(unitId: string, direct: boolean): Promise<UnitStatus['state']> {
    const name = instanceName(unitId);
    const found = direct ? await findInstance(client, name) : await listedInstance(client, name);
    if (!found) return (await readPending(unitId)) ? 'stopped' : 'absent';
    if (!direct && found.status === 'Error' && !(await memberOnline(client, found.location)))
      return 'unreachable';
    return found.status === 'Running' ? 'running' : 'stopped';
  }

  async function stop(unitId: string, force = false): Promise<void> {
    const name = instanceName(unitId);
    const instance = await findInstance(client, name);
    if (!instance || instance.status === 'Stopped') return;
    await setState(client, name, 'stop', force);
  }

  return {
    name: 'lxd',
    capabilities: lxdCapabilities,

    async ensureVolume(volume) {
      await createVolume(client, pool, volumeName(volume.id), volume.sizeGb);
    },
    async deleteVolume(volumeId) {
      knownDirs.delete(volumeId);
      await release(volumeId);
      await deleteVolume(client, pool, volumeName(volumeId));
    },
    async wipeVolume(volumeId) {
      if (inCluster) return onVolume(volumeId).wipe();
      const dir = await existingHostDir(volumeId);
      for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
    },
    async installImage(volumeId, imageId) {
      if (inCluster) return onVolume(volumeId).installImage(imageId);
      const dir = await existingHostDir(volumeId);
      await installImage(layoutOf(dir), volumeId, imageId);
      await shiftToVolumeOwner(dir);
    },
    async installedImage(volumeId) {
      if (inCluster) {
        if (!(await findVolume(client, pool, volumeName(volumeId)))) return null;
        return onVolume(volumeId).installedImage();
      }
      const dir = await hostDir(volumeId);
      return dir ? installedImage(layoutOf(dir), volumeId) : null;
    },
    async resetMachineAccess(unitId, volumeId, credentials) {
      if (inCluster) return onVolume(volumeId).resetAccess(checkId('unit', unitId), credentials);
      const dir = await existingHostDir(volumeId);
      await resetMachineAccess(layoutOf(dir), unitId, volumeId, credentials);
      await shiftToVolumeOwner(dir);
    },
    async setMachineAccess(unitId, volumeId, credentials) {
      if (inCluster) return onVolume(volumeId).setAccess(checkId('unit', unitId), credentials);
      const dir = await existingHostDir(volumeId);
      await writeMachineAccess(layoutOf(dir), unitId, volumeId, credentials);
      await shiftToVolumeOwner(dir);
    },

    async createSnapshot(snapshot, transfer) {
      const volume = await findVolume(client, pool, volumeName(snapshot.volumeId));
      if (!volume) throw new Error(`volume ${snapshot.volumeId} does not exist`);
      const measure = inCluster
        ? () => onVolume(snapshot.volumeId).usedBytes()
        : async () => volumeBytes(await volumeHostDir(client, pool, volume));
      return takeSnapshot(client, pool, volume, checkId('snapshot', snapshot.id), measure, transfer);
    },
    restoreSnapshot: async (snapshot, expected, transfer) => {
      // LXD refuses to restore a volume an instance uses, the volume host included.
      await release(snapshot.volumeId);
      return restoreSnapshot(
        client,
        pool,
        await findVolume(client, pool, volumeName(snapshot.volumeId)),
        checkId('snapshot', snapshot.id),
        expected,
        transfer,
      );
    },
    deleteSnapshot: async (snapshot) =>
      dropSnapshot(
        client,
        pool,
        await findVolume(client, pool, volumeName(snapshot.volumeId)),
        checkId('snapshot', snapshot.id),
      ),

    startUnit: (unit) =>
      serial(unit.id, async () => {
        const name = instanceName(unit.id);
        let instance = await findInstance(client, name);
        if (instance?.status === 'Running') return;
        if (instance && unit.address)
          await setPortDevices(client, instance, unit.address, unit.privatePorts ?? [], PRIVATE);
        instance ??= await create(unit, name);
        await writeInstanceFile(
          client,
          name,
          `${unitDirIn(unit.id)}/${UNIT_FILES.unit}`,
          `${JSON.stringify(unitFile(unit))}\n`,
        );
        const pending = await readPending(unit.id);
        if (pending) {
          await pushContract(name, unit.id, pending, false);
          await rm(pendingFile(unit.id), { force: true });
        }
        // A stopped agent's pid must not name a process of the next boot.
        await client
          .raw({
            method: 'DELETE',
            path: `/1.0/instances/${name}/files`,
            query: { path: `${unitDirIn(unit.id)}/${UNIT_FILES.agentPid}` },
          })
          .then((r) => r.resume());
        await setState(client, name, 'start');
      }),
    stopUnit: (unitId) => serial(unitId, () => stop(unitId)),
    deleteUnit: (unitId) =>
      serial(unitId, async () => {
        await stop(unitId, true);
        await deleteInstance(client, instanceName(unitId));
        await rm(pendingFile(unitId), { force: true });
      }),
    async unitStatus(unitId): Promise<UnitStatus> {
      const name = instanceName(unitId);
      const statusFile = `${unitDirIn(unitId)}/${UNIT_FILES.status}`;
      const direct = await everyMemberOnline(client);
      // With every member answering, the agent's file is read beside the state rather than after it; a
      // file read waits on a silent member as a direct GET does, so otherwise only once its member answers.
      const [state, early] = await Promise.all([
        unitState(unitId, direct),
        direct ? readInstanceFile(client, name, statusFile) : null,
      ]);
      if (state === 'absent' || state === 'unreachable')
        return { state, observedGeneration: null, lastError: null };
      const text = direct ? early : await readInstanceFile(client, name, statusFile);
      let status: AgentStatus | null = null;
      try {
        status = text ? (JSON.parse(text) as AgentStatus) : null;
      } catch {
        status = null;
      }
      return {
        state,
        observedGeneration: status?.observedGeneration ?? null,
        lastError: status?.lastError ?? null,
      };
    },

    unitState: async (unitId) => unitState(unitId, await everyMemberOnline(client)),
    // The volume is the instance's `volume` disk device (create above), whichever volume it is.
    unitUsage: (unitId) => lxdUnitUsage(client, instanceName(unitId), 'volume'),

    async openConsole(unitId) {
      const name = instanceName(unitId);
      if ((await findInstance(client, name))?.status !== 'Running') return null;
      return openLxdConsole(client, name, unitDirIn(unitId));
    },
    async openScreen(unitId) {
      const name = instanceName(unitId);
      if ((await findInstance(client, name))?.status !== 'Running') return null;
      return openLxdScreen(client, name, unitDirIn(unitId));
    },
    offeredShells: () => [...LXD_SHELLS],
    async openShell(unitId, shells, size) {
      const name = instanceName(unitId);
      if ((await findInstance(client, name))?.status !== 'Running') return null;
      const text = await readInstanceFile(client, name, `${unitDirIn(unitId)}/${UNIT_FILES.unit}`);
      if (!text) return null;
      const unit = JSON.parse(text) as UnitSpec;
      const volume = volumeDirIn(unit.volumeId);
      const machine = unit.kind === 'machine';
      return openLxdShell(client, name, shells, size, {
        root: machine ? `${volume}/${ROOTFS}` : volume,
        home: machine ? '/root' : '/',
      });
    },
    // The confined file layer: on the volume where its member keeps it on this machine, its new files
    // given to the instance's mapped root (walk.ts OwnedVolumeRoot); or, for a cluster elsewhere, run by
    // a volume server in the member's volume host, as that instance's root (the units' mapped root too).
    volumeFiles: (volumeId) =>
      inCluster
        ? new RemoteVolumeFiles(sessions, checkId('volume', volumeId))
        : new VolumeFiles(volumeRoot(volumeId)),
    volumeImportTarget: (volumeId) =>
      inCluster
        ? new RemoteImportTarget(sessions, checkId('volume', volumeId))
        : new VolumeImportTarget(volumeRoot(volumeId)),

    async exposePorts(unitId, ports) {
      const name = instanceName(unitId);
      const instance = await findInstance(client, name);
      const address = instance?.config['user.svc.address'];
      if (!instance || !address) return;
      await setPortDevices(client, instance, address, ports);
    },

    async writeUnitSignal(unitId, spec) {
      const name = instanceName(unitId);
      const instance = await findInstance(client, name);
      if (instance) return pushContract(name, unitId, spec, instance.status === 'Running');
      await mkdir(dirname(pendingFile(unitId)), { recursive: true, mode: 0o700 });
      await writeJsonAtomic(pendingFile(unitId), spec, 0o600);
    },
    async readUnitSignal(unitId) {
      const name = instanceName(unitId);
      if (!(await findInstance(client, name))) return readPending(unitId);
      const text = await readInstanceFile(client, name, `${unitDirIn(unitId)}/${UNIT_FILES.signal}`);
      return text ? (JSON.parse(text) as UnitSignalSpec) : null;
    },

    async close({ stopUnits = false } = {}) {
      await sessions.closeAll();
      if (!stopUnits) return;
      const all = (await client.call<Instance[]>('GET', '/1.0/instances', undefined, { recursion: '1' }))
        .metadata;
      await Promise.all(
        all
          .filter((i) => i.name.startsWith(prefix) && i.status === 'Running')
          .map((i) => setState(client, i.name, 'stop')),
      );
    },
  };
}
