// What only the local driver does: processes of this machine, files under DATA_DIR, and the safety nets
// around both (pid reuse, orphans, a deleted data directory).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UnitSignalSpec } from '../../generated/unit-signal.js';
import type { UnitStatus } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';
import { createLocalDriver, type LocalDriver } from '../../server/src/substrate/local/driver.js';
import { pidAlive } from '../../server/src/substrate/local/proc.js';
import { eventually, kill9, processesOfVolume, processesUnder } from './drivers.js';
import { passwordAccess } from '../support/machine-access.js';
import { NO_CREDENTIALS } from '../../server/src/substrate/machine-credentials.js';

const spec = (generation: number): UnitSignalSpec => ({
  unitId: 'unit-1',
  key: 'web',
  contractVersion: 1,
  generation,
});

let dataDir: string;
let driver: LocalDriver;
const unitDir = () => join(dataDir, 'units', 'unit-1');

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-local-'));
  driver = createLocalDriver({ dataDir });
  await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
});

afterEach(async () => {
  try {
    await driver.close({ stopUnits: true });
    expect(await processesUnder(dataDir)).toEqual([]);
  } finally {
    // Also after a failure: an agent whose unit directory is gone exits by itself.
    await rm(dataDir, { recursive: true, force: true });
  }
});

const statusWhere = (what: string, ok: (s: UnitStatus) => boolean) =>
  eventually(what, async () => {
    const status = await driver.unitStatus('unit-1');
    return ok(status) ? status : undefined;
  });
const agentPid = async () => Number((await readFile(join(unitDir(), 'agent.pid'), 'utf8')).trim());
const agentStatusFile = async () =>
  JSON.parse(await readFile(join(unitDir(), 'status.json'), 'utf8')) as Record<string, unknown>;

describe('local driver', () => {
  it('reports the installed image of a machine', async () => {
    await driver.installImage('vol-1', 'debian-12');
    await driver.writeUnitSignal('unit-1', spec(1));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    await statusWhere('generation 1', (s) => s.observedGeneration === 1);
    expect(await agentStatusFile()).toMatchObject({
      osImage: 'debian-12',
      agentPid: await agentPid(),
      lastError: null,
    });
  });

  it("starts its agent's session below the control plane's CPU weight, and the agent itself at its own", async () => {
    await driver.writeUnitSignal('unit-1', spec(1));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    const pid = await agentPid();
    // Where this kernel groups by session at all (it does here), the agent's group is at nice 10.
    if (existsSync('/proc/self/autogroup'))
      expect(await readFile(`/proc/${pid}/autogroup`, 'utf8')).toMatch(/ nice 10\n$/);
    // Not the agent's own nice value: its unit's programs would inherit it (usage.test.ts's spinner).
    expect(getPriority(pid)).toBe(0);
  });

  it('refuses a contract file that is not JSON, naming the whole document', async () => {
    await driver.writeUnitSignal('unit-1', spec(1));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    await statusWhere('generation 1', (s) => s.observedGeneration === 1);
    await writeFile(join(unitDir(), 'unit-signal.json'), '{"generation": 2, "key": "secret-looking');
    const status = await statusWhere('a refusal', (s) => s.lastError !== null);
    expect(status).toMatchObject({
      observedGeneration: 1,
      lastError: { generation: -1, errors: [{ pointer: '', message: 'is not valid JSON' }] },
    });
    const log = await readFile(join(unitDir(), 'agent.log'), 'utf8');
    expect(log).toContain('refused contract generation -1');
    expect(log).not.toContain('secret-looking');
  });

  it('keeps the acknowledged generation across agent restarts', async () => {
    await driver.writeUnitSignal('unit-1', spec(5));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    await statusWhere('generation 5', (s) => s.observedGeneration === 5);
    await driver.stopUnit('unit-1');
    await driver.writeUnitSignal('unit-1', spec(3));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    const status = await statusWhere('generation 3 refused', (s) => s.lastError?.generation === 3);
    expect(status.observedGeneration).toBe(5);
  });

  it('does not take a reused pid for the unit agent', async () => {
    await driver.writeUnitSignal('unit-1', spec(1));
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    await driver.stopUnit('unit-1');
    // agent.pid naming a live process that is not this unit's agent: this very test process.
    await writeFile(join(unitDir(), 'agent.pid'), `${process.pid}\n`);
    expect((await driver.unitStatus('unit-1')).state).toBe('stopped');
    await driver.stopUnit('unit-1');
    await driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-1' });
    expect(await agentPid()).not.toBe(process.pid);
    expect((await driver.unitStatus('unit-1')).state).toBe('running');
  });

  it('takes the workload with a killed agent, and runs one again when the unit starts again', async () => {
    const unit = {
      id: 'unit-1',
      kind: 'workload' as const,
      volumeId: 'vol-1',
      command: [
        process.execPath,
        '-e',
        "require('node:fs').appendFileSync('starts', 'x\\n'); setInterval(() => {}, 1000);",
      ],
    };
    const volume = join(dataDir, 'volumes', 'vol-1');
    const starts = async () =>
      (await readFile(join(volume, 'starts'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const programs = async () => (await processesOfVolume(volume)).filter((p) => p.comm === 'node');
    await driver.startUnit(unit);
    await eventually('the workload', async () => ((await starts()) === 1 ? true : undefined));
    expect(await programs()).toHaveLength(1);
    // Nothing of a unit outlives its agent (DECISIONS.md §8): the confined program dies with it.
    kill9(await agentPid());
    await statusWhere('the agent gone', (s) => s.state === 'stopped');
    await eventually('the workload gone', async () =>
      (await processesOfVolume(volume)).length === 0 ? true : undefined,
    );

    await driver.startUnit(unit);
    await eventually('a new workload', async () => ((await starts()) === 2 ? true : undefined));
    expect(await programs()).toHaveLength(1);
  });

  it('one agent survives two drivers starting the same unit at once', async () => {
    const other = createLocalDriver({ dataDir });
    const unit = { id: 'unit-1', kind: 'machine' as const, volumeId: 'vol-1' };
    await Promise.all([driver.startUnit(unit), other.startUnit(unit)]);
    const agents = async () => (await processesUnder(dataDir)).filter((pid) => pidAlive(pid));
    const [survivor] = await eventually('one agent left', async () =>
      (await agents()).length === 1 ? agents() : undefined,
    );
    expect(survivor).toBe(await agentPid());
    expect((await driver.unitStatus('unit-1')).state).toBe('running');
  });

  it('an agent gives way when agent.pid comes to name another running agent', async () => {
    const unit = { id: 'unit-1', kind: 'machine' as const, volumeId: 'vol-1' };
    await driver.startUnit(unit);
    const first = await agentPid();
    await eventually('the first agent reporting', async () =>
      (await agentStatusFile().catch(() => null))?.agentPid === first ? true : undefined,
    );
    // The record lost (a pid no process has): the driver takes the unit for stopped and starts another.
    await writeFile(join(unitDir(), 'agent.pid'), '2147483646\n');
    await driver.startUnit(unit);
    const second = await agentPid();
    expect(second).not.toBe(first);
    await eventually('only the second agent left', async () =>
      (await processesUnder(dataDir)).join() === String(second) ? true : undefined,
    );
  });

  it('agents exit by themselves when their unit directory is deleted', async () => {
    await driver.startUnit({ id: 'unit-1', kind: 'workload', volumeId: 'vol-1', command: null });
    const pid = await agentPid();
    // Once the agent runs (its status names it), not while it boots.
    await eventually('the agent reporting', async () =>
      (await agentStatusFile().catch(() => null))?.agentPid === pid ? true : undefined,
    );
    await rm(unitDir(), { recursive: true, force: true });
    await eventually('the agent exited', async () => (pidAlive(pid) ? undefined : true));
  });

  it('refuses ids that are not a plain path segment and volumes that were never made', async () => {
    await expect(driver.ensureVolume({ id: '..', sizeGb: 1 })).rejects.toThrow(/invalid volume id/);
    await expect(driver.deleteVolume('../units')).rejects.toThrow(/invalid volume id/);
    await expect(driver.startUnit({ id: 'a/b', kind: 'machine', volumeId: 'vol-1' })).rejects.toThrow(
      /invalid unit id/,
    );
    await expect(driver.startUnit({ id: 'unit-1', kind: 'machine', volumeId: 'vol-2' })).rejects.toThrow(
      /does not exist/,
    );
    expect((await driver.unitStatus('unit-1')).state).toBe('absent');
  });

  it('neither deletes nor writes through symlinks a machine left on its volume', async () => {
    const outside = join(dataDir, 'outside');
    await mkdir(join(outside, '.ssh'), { recursive: true });
    await writeFile(join(outside, '.ssh', 'authorized_keys'), 'operator key');
    const rootfs = join(dataDir, 'volumes', 'vol-1', 'rootfs');
    await mkdir(join(rootfs, 'home'), { recursive: true });
    await symlink(outside, join(rootfs, 'home', 'evil'));
    await driver.resetMachineAccess('unit-1', 'vol-1', NO_CREDENTIALS);
    expect(await readFile(join(outside, '.ssh', 'authorized_keys'), 'utf8')).toBe('operator key');

    await rm(join(rootfs, 'etc'), { recursive: true });
    await symlink(outside, join(rootfs, 'etc'));
    await expect(driver.resetMachineAccess('unit-1', 'vol-1', NO_CREDENTIALS)).rejects.toThrow(/leads outside its volume/);
    await expect(driver.installImage('vol-1', 'debian-12')).rejects.toThrow(/leads outside its volume/);
    expect((await readdir(outside)).sort()).toEqual(['.ssh']);
  });

  it('checks the machine login that resetMachineAccess set', async () => {
    const { username, password, credentials } = await passwordAccess();
    await driver.resetMachineAccess('unit-1', 'vol-1', credentials);
    expect(await driver.checkMachineAccess('vol-1', username, password)).toBe(true);
    expect(await driver.checkMachineAccess('vol-1', username, `${password}x`)).toBe(false);
    expect(await driver.checkMachineAccess('vol-1', 'admin', password)).toBe(false);
    await driver.resetMachineAccess('unit-1', 'vol-1', NO_CREDENTIALS);
    expect(await driver.checkMachineAccess('vol-1', username, password)).toBe(false);
  });
});

describe('createSubstrate', () => {
  it('builds the local driver and says kubernetes is not built yet', () => {
    expect(createSubstrate('local', { dataDir }).name).toBe('local');
    expect(() => createSubstrate('kubernetes', { dataDir })).toThrow(
      /^SUBSTRATE=kubernetes is not built yet: /,
    );
  });
  it('a restore killed between its two renames leaves the restored data in place, never an empty volume', async () => {
    const volumes = join(dataDir, 'volumes');
    await writeFile(join(volumes, 'vol-1', 'page.html'), 'version 1');
    const snap = { id: 'snap-1', volumeId: 'vol-1' };
    const info = await driver.createSnapshot(snap);
    await writeFile(join(volumes, 'vol-1', 'page.html'), 'version 2');
    // What the swap leaves when killed after its first rename: the old data aside, the whole restored
    // data beside it, and no volume.
    await mkdir(join(volumes, '.vol-1.restored-snap-1'));
    await writeFile(join(volumes, '.vol-1.restored-snap-1', 'page.html'), 'version 1');
    await rename(join(volumes, 'vol-1'), join(volumes, '.vol-1.old'));
    // Anything that needs the volume puts the restored data in place first (never makes it empty)...
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    expect(await readFile(join(volumes, 'vol-1', 'page.html'), 'utf8')).toBe('version 1');
    // ...and the restore, run again, finishes with nothing left beside the volume.
    await driver.restoreSnapshot(snap, info);
    expect(await readFile(join(volumes, 'vol-1', 'page.html'), 'utf8')).toBe('version 1');
    expect((await readdir(volumes)).sort()).toEqual(['vol-1']);
    // A partial unpack of a killed restore is thrown away by the next one.
    await mkdir(join(volumes, '.vol-1.unpack-snap-1'));
    await writeFile(join(volumes, '.vol-1.unpack-snap-1', 'half'), 'x');
    await driver.restoreSnapshot(snap, info);
    expect((await readdir(volumes)).sort()).toEqual(['vol-1']);
    expect((await readdir(join(volumes, 'vol-1'))).sort()).toEqual(['page.html']);
  });
});

describe('snapshot progress', () => {
  it('reports bytes done as the archive is written and read: rising, ending at the total', async () => {
    // 24 MiB that do not compress: tar checkpoints every 10 MB, the restore reads the archive in chunks.
    for (let i = 0; i < 3; i += 1) {
      await writeFile(join(dataDir, 'volumes', 'vol-1', `part-${i}.bin`), randomBytes(8 * 1024 * 1024));
    }
    const made: [number, number][] = [];
    const info = await driver.createSnapshot(
      { id: 'snap-1', volumeId: 'vol-1' },
      { onProgress: (done, total) => made.push([done, total]) },
    );
    const total = made.at(-1)![1];
    expect(total).toBeGreaterThanOrEqual(24 * 1024 * 1024);
    expect(made.at(-1)![0]).toBe(total);
    // Some reports before the end, each further than the one before.
    expect(made.filter(([done]) => done > 0 && done < total).length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < made.length; i += 1) expect(made[i]![0]).toBeGreaterThanOrEqual(made[i - 1]![0]);

    const restored: number[] = [];
    await driver.restoreSnapshot({ id: 'snap-1', volumeId: 'vol-1' }, info, {
      onProgress: (done, of) => {
        expect(of).toBe(info.sizeBytes);
        restored.push(done);
      },
    });
    expect(restored.at(-1)).toBe(info.sizeBytes);
    expect(restored.filter((done) => done > 0 && done < info.sizeBytes).length).toBeGreaterThanOrEqual(2);
    expect(restored).toEqual([...restored].sort((a, b) => a - b));
  });
});
