// The hosting substrate (SUBSTRATE.md): what makes the platform's desired state real. The control plane
// records intent in PostgreSQL and calls a driver from its jobs; it never touches machines itself.
// Every call is idempotent: a job that died half way runs again and converges instead of doing the
// work twice. The interface speaks the platform's nouns, never a driver's.
import type { Duplex } from 'node:stream';
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';
import type { MachineCredentials } from './machine-credentials.js';
import type { VolumeFileAccess, VolumeImportAccess } from './volume-access.js';

export type DriverName = 'local' | 'lxd' | 'kubernetes';

/** What a driver can do; routes of a missing feature answer what the seeds say for it. */
export interface SubstrateCapabilities {
  snapshots: boolean;
  /** An edge gateway runs beside this substrate (consoles, shells, screens through tickets). */
  gateway: boolean;
  /**
   * How a machine's screen is shown: `xvnc` a real X server (Debian's tigervnc-standalone-server), `text`
   * the RFB server built into the machine's agent drawing its text console, false none (the screen routes
   * 404).
   */
  framebuffer: false | 'xvnc' | 'text';
}

export interface VolumeSpec {
  id: string;
  sizeGb: number;
}

/** A machine (a VPS's virtual machine) or a workload (a game server, a web app): a unit with a contract. */
export interface UnitSpec {
  id: string;
  kind: 'machine' | 'workload';
  /** The volume it runs on (a machine boots from it; a workload sees only it). */
  volumeId: string;
  /** What a workload runs (the product's command); null: the agent alone. Machines ignore it. */
  command?: string[] | null;
  /**
   * The catalog's workload program `command` runs (workloads/command.ts), when it is one: a driver whose
   * units do not share this machine's files (LXD) runs its own copy of the program instead.
   */
  program?: string | null;
  /** Environment of the unit's program (SVC_PUBLIC_ENDPOINTS and the like). */
  env?: Record<string, string>;
  /**
   * The unit's own address, where its programs listen and the edge forwards to (the local substrate: a
   * loopback address, handed to the program as SVC_BIND_ADDRESS); null: the host's.
   */
  address?: string | null;
  /**
   * Ports the control plane itself reaches at the unit's address (the block game's RCON), never an
   * allocation's: a substrate whose units are outside this machine's network makes them reachable there.
   */
  privatePorts?: ExposedPort[];
  /** What the unit may use at most: its plan's CPUs and memory (the local substrate's cgroups). */
  limits?: UnitLimits | null;
}

export interface UnitLimits {
  cpu: number;
  memoryMb: number;
}

/** A port of a unit the edge forwards to (an allocation's internal port and protocol). */
export interface ExposedPort {
  protocol: 'tcp' | 'udp';
  port: number;
}

/** A terminal size in character cells. */
export interface TerminalSize {
  columns: number;
  rows: number;
}

/** A shell running on a terminal confined to a unit: its bytes both ways, its size, its end. */
export interface ShellSession {
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once, with the shell's exit code, when it has ended. */
  onExit(listener: (code: number) => void): void;
  write(data: Buffer): void;
  resize(size: TerminalSize): void;
  /** Hangs the shell up, and kills what is left of it after a short grace. */
  stop(): void;
}

export interface UnitSignalError {
  pointer: string;
  message: string;
}

export interface UnitStatus {
  /**
   * Whether the unit's processes run (`absent`: never created, or deleted; `unreachable`: the host that
   * runs it, a cluster member, does not answer, so nobody can say: neither lost nor to be started again).
   */
  state: 'running' | 'stopped' | 'absent' | 'unreachable';
  /** The generation the unit's agent last acknowledged, or null before its first. */
  observedGeneration: number | null;
  /** Why the agent refused the newest contract it saw (it keeps the previous one); null when it did not. */
  lastError: { generation: number; errors: UnitSignalError[] } | null;
}

/**
 * What a unit has used, as the substrate counts it (DECISIONS.md §8 "Usage metrics"): counters are
 * cumulative since the unit started, gauges as of now; null where this substrate cannot tell.
 */
export interface UnitUsage {
  /** CPU time of all its processes, in nanoseconds. */
  cpuNanoseconds: number | null;
  memoryBytes: number | null;
  /** What its volume holds on disk. */
  diskBytes: number | null;
  /** Bytes the unit received and sent over its network. */
  networkRxBytes: number | null;
  networkTxBytes: number | null;
}

/** A snapshot of a volume (a customer's backup): its own id, and the volume it was taken of. */
export interface SnapshotRef {
  id: string;
  volumeId: string;
}

/** What identifies a snapshot's content: restoring checks it first. */
export interface SnapshotInfo {
  sizeBytes: number;
  /** SHA-256 of the stored snapshot, lowercase hex. */
  sha256: string;
}

export interface TransferOptions {
  /** Called as the work goes on: bytes done of about `total` (0 when unknown). */
  onProgress?: (done: number, total: number) => void;
}

/**
 * The host that keeps a unit or a volume (a cluster member) does not answer. Its message is for the
 * customer: an operation that fails for it says so rather than the generic sentence.
 */
export class SubstrateUnreachableError extends Error {
  constructor() {
    super('The host running this service does not answer; try again once it is back.');
    this.name = 'SubstrateUnreachableError';
  }
}

/** The snapshot is missing or no longer what was taken: it must never be restored. */
export class SnapshotIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotIntegrityError';
  }
}

export interface SubstrateDriver {
  readonly name: DriverName;
  capabilities(): SubstrateCapabilities;

  /** Makes the volume exist (empty the first time); a second call changes nothing. */
  ensureVolume(volume: VolumeSpec): Promise<void>;
  /** Removes the volume and everything on it; absent is fine. */
  deleteVolume(volumeId: string): Promise<void>;
  /** Empties the volume (a reinstall's wipe); the volume itself stays. */
  wipeVolume(volumeId: string): Promise<void>;
  /** Writes an operating-system image onto a machine's volume (after a wipe: a fresh install). */
  installImage(volumeId: string, imageId: string): Promise<void>;
  /** The image installed on the volume, or null for none. */
  installedImage(volumeId: string): Promise<string | null>;
  /**
   * Clears every credential on the machine's volume (keys, password hashes, host keys), then writes these
   * (the vm_access step of provisioning and reinstall: seed §3 "old credentials cleared").
   */
  resetMachineAccess(unitId: string, volumeId: string, credentials: MachineCredentials): Promise<void>;
  /**
   * Makes root's authorized keys and password on the machine these, running or not (DECISIONS.md §8
   * "VPS access"): its SSH server reads them at each attempt, so nothing restarts.
   */
  setMachineAccess(unitId: string, volumeId: string, credentials: MachineCredentials): Promise<void>;

  /** Creates the unit if it is not there and makes it run; a running unit is left as it is. */
  startUnit(unit: UnitSpec): Promise<void>;
  /**
   * Stops the unit's processes, what it runs included (a power stop, a restore), keeping the unit, its
   * contract and its volume; a stopped or absent unit is fine. startUnit starts it again.
   */
  stopUnit(unitId: string): Promise<void>;
  /** Stops the unit and forgets it (its contract too); the volume stays. */
  deleteUnit(unitId: string): Promise<void>;
  /** Whether the unit runs, and what its agent last acknowledged. */
  unitStatus(unitId: string): Promise<UnitStatus>;
  /**
   * unitStatus's `state` alone, for callers that do not read the acknowledgement (the converge, power):
   * as current, and cheaper where the acknowledgement is a file read through the substrate's API (LXD).
   */
  unitState(unitId: string): Promise<UnitStatus['state']>;
  /**
   * What the running unit has used (its volume `volumeId`'s size too); null when it does not run. Cheap
   * enough to call for every unit every 10 s (the usage sampler).
   */
  unitUsage(unitId: string, volumeId: string | null): Promise<UnitUsage | null>;

  /**
   * Takes a snapshot of the volume as it is now (the caller stops what writes to it if it wants it
   * quiescent), kept until deleted. Called again for a snapshot already taken, it answers that one.
   */
  createSnapshot(snapshot: SnapshotRef, options?: TransferOptions): Promise<SnapshotInfo>;
  /**
   * Puts the volume back as it was when the snapshot was taken, replacing all it holds now. The snapshot
   * is checked against `expected` first: a missing or altered one throws SnapshotIntegrityError and the
   * volume is left as it was. However the call ends, even killed, the volume holds either its old data
   * or the snapshot's, never a mix; called again, it finishes what it began.
   */
  restoreSnapshot(snapshot: SnapshotRef, expected: SnapshotInfo, options?: TransferOptions): Promise<void>;
  /** Removes the snapshot; absent is fine. */
  deleteSnapshot(snapshot: SnapshotRef): Promise<void>;

  /**
   * The workload's command console: a stream of its output (the scrollback first) that takes its input;
   * null when the unit runs no program or is not running. Every caller shares the one session.
   */
  openConsole(unitId: string): Promise<Duplex | null>;
  /**
   * A machine's screen: a stream of its RFB 3.8 server (the server speaks first), one per viewer; null when
   * the machine shows none (not running, or no framebuffer on this substrate).
   */
  openScreen(unitId: string): Promise<Duplex | null>;
  /** The shells the units' images offer, in the order they are tried (empty: no shell). */
  offeredShells(): string[];
  /**
   * Starts the first of `shells` the image offers on a terminal of `size`, confined to the running unit
   * (nothing of the host), for the gateway to bridge; null when the unit does not run or offers none.
   */
  openShell(unitId: string, shells: readonly string[], size: TerminalSize): Promise<ShellSession | null>;

  /**
   * The files of a volume, reached only through the confined file layer (DECISIONS.md §6 "Files"): every
   * file route, download, file session, SFTP session and import write goes through what this returns.
   * Null when this substrate cannot reach the volume's files.
   */
  volumeFiles(volumeId: string): VolumeFileAccess | null;
  /** Where an import writes into the volume, through the same confined layer; null as volumeFiles. */
  volumeImportTarget(volumeId: string): VolumeImportAccess | null;

  /**
   * Makes these ports of the unit reachable at its address from this machine (where the edge forwards
   * its allocations to), and no others this call exposed before. The local substrate's units listen in
   * this machine's network already: nothing to do. A unit that is not there is left alone.
   */
  exposePorts(unitId: string, ports: readonly ExposedPort[]): Promise<void>;

  /** Writes the unit's contract for its agent (the local driver: a file beside the unit). */
  writeUnitSignal(unitId: string, spec: UnitSignalSpec): Promise<void>;
  /** The contract as last written, or null. */
  readUnitSignal(unitId: string): Promise<UnitSignalSpec | null>;

  /**
   * Lets go of what the driver holds in this process. Units keep running (a control plane that stops
   * does not stop its customers' machines) unless `stopUnits` is set, as tests do.
   */
  close(options?: { stopUnits?: boolean }): Promise<void>;
}
