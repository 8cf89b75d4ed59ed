// The behaviour every substrate driver must show (SUBSTRATE.md "Two drivers, one interface"), run over
// each driver of drivers.ts. Each test has its own DATA_DIR and stops every unit it started.
import { randomUUID } from 'node:crypto';
import { addressSpaceOf, unitAddressCandidate } from '../../server/src/substrate/local/address.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UnitSignalSpec } from '../../generated/unit-signal.js';
import {
  SnapshotIntegrityError,
  type SubstrateDriver,
  type UnitSpec,
  type UnitStatus,
} from '../../server/src/substrate/driver.js';
import { drivers, eventually, type Probe } from './drivers.js';
import { connect } from 'node:net';
import { passwordAccess } from '../support/machine-access.js';

/** What a TCP server at address:port says before it closes; undefined when nothing answers. */
function readFrom(address: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host: address, port });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.once('error', () => resolve(undefined));
    socket.once('close', () => resolve(text || undefined));
  });
}

const spec = (generation: number, extra: Record<string, unknown> = {}): UnitSignalSpec =>
  ({ unitId: 'unit-1', key: 'web', contractVersion: 1, generation, ...extra }) as UnitSignalSpec;
const machine: UnitSpec = { id: 'unit-1', kind: 'machine', volumeId: 'vol-1' };

describe.each(drivers)('$name driver', (subject) => {
  let dataDir: string;
  let driver: SubstrateDriver;
  let probe: Probe;
  const others: SubstrateDriver[] = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), `svc-substrate-${subject.name}-`));
    driver = subject.make(dataDir);
    probe = subject.probe(dataDir);
  });

  afterEach(async () => {
    try {
      for (const other of others.splice(0)) await other.close();
      await driver.close({ stopUnits: true });
      expect(await probe.processes()).toEqual([]);
    } finally {
      await probe.cleanup();
      // Also after a failure: an agent whose unit directory is gone exits by itself.
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  /** Waits until the unit's status satisfies `ok`, answering it. */
  const statusWhere = (unitId: string, what: string, ok: (s: UnitStatus) => boolean) =>
    eventually(what, async () => {
      const status = await driver.unitStatus(unitId);
      return ok(status) ? status : undefined;
    });
  const acknowledged = (generation: number) =>
    statusWhere(
      'unit-1',
      `generation ${generation} acknowledged`,
      (s) => s.observedGeneration === generation,
    );
  const refused = (generation: number) =>
    statusWhere('unit-1', `generation ${generation} refused`, (s) => s.lastError?.generation === generation);

  async function runningMachine(): Promise<number> {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', spec(1));
    await driver.startUnit(machine);
    await acknowledged(1);
    return (await probe.agentPid('unit-1'))!;
  }

  it('makes, wipes and deletes volumes, each call idempotent', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 5 });
    expect(await probe.volumeEntries('vol-1')).toEqual([]);
    await probe.writeVolumeFile('vol-1', 'data/world.dat', 'blocks');
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 5 });
    expect(await probe.readVolumeFile('vol-1', 'data/world.dat')).toBe('blocks');

    await driver.wipeVolume('vol-1');
    expect(await probe.volumeEntries('vol-1')).toEqual([]);
    await driver.wipeVolume('vol-1');

    await driver.deleteVolume('vol-1');
    expect(await probe.volumeEntries('vol-1')).toBeNull();
    await driver.deleteVolume('vol-1');
    await driver.deleteVolume('never-made');
  });

  it('installs an image and reads it back', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 5 });
    expect(await driver.installedImage('vol-1')).toBeNull();
    await driver.installImage('vol-1', 'ubuntu-24.04');
    await driver.installImage('vol-1', 'ubuntu-24.04');
    expect(await driver.installedImage('vol-1')).toBe('ubuntu-24.04');
    const osRelease = await probe.readVolumeFile('vol-1', 'rootfs/etc/os-release');
    expect(osRelease).toContain('ID=ubuntu\n');
    expect(osRelease).toContain('VERSION_ID="24.04"\n');

    await driver.wipeVolume('vol-1');
    expect(await driver.installedImage('vol-1')).toBeNull();
    await driver.installImage('vol-1', 'windows-server-2022');
    expect(await driver.installedImage('vol-1')).toBe('windows-server-2022');
    await expect(driver.installImage('vol-1', '../etc')).rejects.toThrow(/invalid image id/);
    expect(await driver.installedImage('vol-1')).toBe('windows-server-2022');
    expect(await driver.installedImage('never-made')).toBeNull();
  });

  it('resets machine access: old keys and access gone, a new password each time', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 5 });
    await driver.installImage('vol-1', 'debian-12');
    await probe.writeVolumeFile('vol-1', 'rootfs/root/.ssh/authorized_keys', 'ssh-ed25519 AAAA old@laptop\n');
    await probe.writeVolumeFile(
      'vol-1',
      'rootfs/home/alice/.ssh/authorized_keys',
      'ssh-ed25519 AAAA alice\n',
    );
    await probe.writeVolumeFile('vol-1', 'rootfs/etc/shadow', 'root:$6$old:19000:0:99999:7:::\n');
    await probe.writeVolumeFile('vol-1', 'rootfs/etc/svc-access.json', '{"old":true}');
    await probe.writeVolumeFile('vol-1', 'rootfs/srv/site/index.html', 'kept');

    const first = await passwordAccess();
    await driver.resetMachineAccess('unit-1', 'vol-1', first.credentials);
    expect(await probe.readVolumeFile('vol-1', 'rootfs/root/.ssh/authorized_keys')).toBe('');
    expect(await probe.readVolumeFile('vol-1', 'rootfs/home/alice/.ssh/authorized_keys')).toBeNull();
    // The old shadow is gone; root's entry is the new password's crypt(3) hash, which the machine's sshd
    // checks (never the password itself).
    const shadow = await probe.readVolumeFile('vol-1', 'rootfs/etc/shadow');
    expect(shadow).toBe(`root:${first.credentials.password!.shadow}:19000:0:99999:7:::\n`);
    expect(shadow).not.toContain('$6$old');
    expect(shadow).not.toContain(first.password);
    expect(await probe.readVolumeFile('vol-1', 'rootfs/srv/site/index.html')).toBe('kept');
    const access = await probe.readVolumeFile('vol-1', 'rootfs/etc/svc-access.json');
    expect(access).not.toBeNull();
    expect(access).not.toContain('"old"');
    expect(access).not.toContain(first.password);

    const second = await passwordAccess(['ssh-ed25519 AAAAkept']);
    await driver.resetMachineAccess('unit-1', 'vol-1', second.credentials);
    expect(await probe.readVolumeFile('vol-1', 'rootfs/root/.ssh/authorized_keys')).toBe('ssh-ed25519 AAAAkept\n');
    const again = await probe.readVolumeFile('vol-1', 'rootfs/etc/svc-access.json');
    expect(again).not.toBe(access);
    expect(again).not.toContain(second.password);
    await expect(driver.resetMachineAccess('unit-1', 'never-made', second.credentials)).rejects.toThrow(/does not exist/);
  });

  it('starts a unit once, stops it and deletes it, keeping the volume', async () => {
    expect((await driver.unitStatus('unit-1')).state).toBe('absent');
    expect(await driver.unitState('unit-1')).toBe('absent');
    const pid = await runningMachine();
    await driver.startUnit(machine);
    expect(await probe.agentPid('unit-1')).toBe(pid);
    expect(await probe.processes()).toEqual([pid]);
    expect(await driver.unitStatus('unit-1')).toEqual({
      state: 'running',
      observedGeneration: 1,
      lastError: null,
    });
    expect(await driver.unitState('unit-1')).toBe('running');

    await driver.stopUnit('unit-1');
    expect((await driver.unitStatus('unit-1')).state).toBe('stopped');
    expect(await driver.unitState('unit-1')).toBe('stopped');
    expect(await probe.processes()).toEqual([]);
    await driver.stopUnit('unit-1');

    await driver.deleteUnit('unit-1');
    expect(await driver.unitStatus('unit-1')).toEqual({
      state: 'absent',
      observedGeneration: null,
      lastError: null,
    });
    expect(await driver.readUnitSignal('unit-1')).toBeNull();
    expect(await probe.volumeEntries('vol-1')).toEqual([]);
    await driver.deleteUnit('unit-1');
    await driver.stopUnit('never-made');
  });

  it('acknowledges each generation after writing it', async () => {
    await runningMachine();
    expect(await driver.readUnitSignal('unit-1')).toEqual(spec(1));
    const endpoints = [{ protocols: ['tcp'], internal_port: 25565, address: '203.0.113.7:31000' }];
    await driver.writeUnitSignal('unit-1', spec(2, { publicEndpoints: endpoints }));
    expect(await acknowledged(2)).toEqual({ state: 'running', observedGeneration: 2, lastError: null });
    expect(await probe.appliedContract('unit-1')).toEqual(spec(2, { publicEndpoints: endpoints }));
  });

  it('refuses a spec that fails validation and keeps the previous contract', async () => {
    await runningMachine();
    await driver.writeUnitSignal('unit-1', spec(2, { key: 'Bad Key', labels: { 'Not Valid': 'x' } }));
    const status = await refused(2);
    expect(status.observedGeneration).toBe(1);
    expect(status.state).toBe('running');
    const pointers = status.lastError!.errors.map((e) => e.pointer);
    expect(pointers).toContain('/key');
    expect(pointers).toContain('/labels/Not Valid');
    expect(await probe.appliedContract('unit-1')).toEqual(spec(1));

    // The next good spec clears the error.
    await driver.writeUnitSignal('unit-1', spec(3));
    expect(await acknowledged(3)).toMatchObject({ observedGeneration: 3, lastError: null });
  });

  it('ignores unknown fields, top-level and nested', async () => {
    await runningMachine();
    const allocation = { id: 'alloc-1', generation: 4, allocatedAt: '2024-05-01T12:00:00Z' };
    await driver.writeUnitSignal(
      'unit-1',
      spec(2, {
        fromTheFuture: { anything: true },
        allocation: { ...allocation, zone: 'eu-1' },
        publicEndpoints: [
          { protocols: ['udp'], internal_port: 27960, address: '203.0.113.7:27960', weight: 3 },
        ],
        userData: { kept: { as: 'is' } },
      }),
    );
    expect(await acknowledged(2)).toMatchObject({ lastError: null });
    expect(await probe.appliedContract('unit-1')).toEqual(
      spec(2, {
        allocation,
        publicEndpoints: [{ protocols: ['udp'], internal_port: 27960, address: '203.0.113.7:27960' }],
        userData: { kept: { as: 'is' } },
      }),
    );
  });

  it('refuses a generation lower than the one acknowledged', async () => {
    await runningMachine();
    await driver.writeUnitSignal('unit-1', spec(5));
    await acknowledged(5);
    await driver.writeUnitSignal('unit-1', spec(4, { labels: { lowered: 'yes' } }));
    const status = await refused(4);
    expect(status.observedGeneration).toBe(5);
    expect(status.lastError!.errors).toEqual([
      { pointer: '/generation', message: expect.stringContaining('5') },
    ]);
    expect(await probe.appliedContract('unit-1')).toEqual(spec(5));
  });

  it('restarts an agent killed with SIGKILL, which acknowledges again', async () => {
    const pid = await runningMachine();
    await probe.kill9(pid);
    if (!probe.supervisesAgents)
      await statusWhere('unit-1', 'the unit stopped', (s) => s.state === 'stopped');
    await driver.writeUnitSignal('unit-1', spec(2));
    await driver.startUnit(machine);
    const restarted = await eventually('a new agent', async () => {
      const now = await probe.agentPid('unit-1');
      return now !== null && now !== pid && (await probe.processes()).includes(now) ? now : undefined;
    });
    expect(await acknowledged(2)).toMatchObject({ state: 'running', lastError: null });
    expect(await probe.processes()).toEqual([restarted]);
  });

  it('lets a second driver on the same data directory adopt a running unit', async () => {
    const pid = await runningMachine();
    const second = subject.make(dataDir);
    others.push(second);
    await second.startUnit(machine);
    expect(await probe.agentPid('unit-1')).toBe(pid);
    // Only the first agent runs (a child it is still spawning is not counted: drivers.ts).
    expect(await probe.processes()).toEqual([pid]);
    expect(await second.unitStatus('unit-1')).toEqual({
      state: 'running',
      observedGeneration: 1,
      lastError: null,
    });
    await second.writeUnitSignal('unit-1', spec(2));
    await acknowledged(2);
    // Closing a driver leaves its units running.
    await second.close();
    expect((await driver.unitStatus('unit-1')).state).toBe('running');
  });

  it('runs a workload command in its volume with the unit env and the contract endpoints', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    const endpoints = [{ protocols: ['tcp'], internal_port: 8080, address: 'app.example.test:443' }];
    await driver.writeUnitSignal('unit-1', spec(1, { publicEndpoints: endpoints }));
    const script = [
      "const fs = require('node:fs');",
      "fs.writeFileSync('seen.json', JSON.stringify({ endpoints: process.env.SVC_PUBLIC_ENDPOINTS, motd: process.env.MOTD, pid: process.pid }));",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    await driver.startUnit({
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', script],
      env: { MOTD: 'hello' },
    });
    const seen = await eventually('the workload wrote seen.json', async () => {
      const text = await probe.readVolumeFile('vol-1', 'seen.json');
      return text ? (JSON.parse(text) as { endpoints: string; motd: string; pid: number }) : undefined;
    });
    expect(JSON.parse(seen.endpoints)).toEqual(endpoints);
    expect(seen.motd).toBe('hello');
    await acknowledged(1);
    const agent = await probe.agentPid('unit-1');
    expect((await probe.processes()).sort()).toEqual([agent, seen.pid].sort());

    await driver.close({ stopUnits: true });
    expect(await probe.processes()).toEqual([]);
    expect((await driver.unitStatus('unit-1')).state).toBe('stopped');
  });
  it('stops what runs in a unit with it, and starts it again (power stop, start)', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', spec(1));
    // The program writes its pid on every start: a stop must end it, not only the agent.
    const script = [
      "const fs = require('node:fs');",
      "fs.appendFileSync('starts.txt', process.pid + '\\n');",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const workload: UnitSpec = {
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', script],
    };
    const pids = async () =>
      ((await probe.readVolumeFile('vol-1', 'starts.txt')) ?? '').split('\n').filter(Boolean).map(Number);
    await driver.startUnit(workload);
    const [first] = await eventually('the program started', async () =>
      (await pids()).length ? pids() : undefined,
    );
    await acknowledged(1);
    expect(await probe.processes()).toContain(first);

    await driver.writeUnitSignal('unit-1', spec(2, { draining: 'stop' }));
    await acknowledged(2);
    expect((await probe.appliedContract('unit-1'))?.draining).toBe('stop');
    await driver.stopUnit('unit-1');
    expect(await probe.processes()).toEqual([]);
    expect((await driver.unitStatus('unit-1')).state).toBe('stopped');
    // The volume and the contract stay: a stopped unit starts again where it was.
    expect(await probe.readVolumeFile('vol-1', 'starts.txt')).not.toBeNull();

    await driver.writeUnitSignal('unit-1', spec(3, { draining: false }));
    await driver.startUnit(workload);
    expect(await acknowledged(3)).toMatchObject({ state: 'running', lastError: null });
    const second = await eventually('the program started again', async () => {
      const all = await pids();
      return all.length === 2 ? all[1] : undefined;
    });
    // Two lines in starts.txt are the second start; its pid may equal the first where pids are the
    // instance's own (an LXD container's pid namespace starts afresh on each boot).
    expect(await probe.processes()).toContain(second);
  });
  it("attaches to a workload's console: its output first, then what is sent echoed back", async () => {
    expect(await driver.openConsole('unit-1')).toBeNull();
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', spec(1));
    const script = [
      "process.stdout.write('ready to echo\\n');",
      "process.stdin.on('data', (d) => process.stdout.write('echo: ' + d));",
    ].join('\n');
    await driver.startUnit({
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', script],
    });
    await acknowledged(1);
    const console = await eventually('the console', () =>
      driver.openConsole('unit-1').then((c) => c ?? undefined),
    );
    let seen = '';
    console.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
    await eventually('the scrollback', async () => (seen.includes('ready to echo\n') ? true : undefined));
    console.write('ping\n');
    await eventually('the echo', async () => (seen.includes('echo: ping\n') ? true : undefined));
    // A second viewer shares the session: it gets the scrollback, the first one's echo included.
    const other = (await driver.openConsole('unit-1'))!;
    let again = '';
    other.on('data', (chunk: Buffer) => (again += chunk.toString('utf8')));
    await eventually('the second viewer', async () => (again.includes('echo: ping\n') ? true : undefined));
    const closed = (stream: typeof console) => new Promise((resolve) => stream.once('close', resolve));
    const both = Promise.all([closed(console), closed(other)]);
    console.destroy();
    other.destroy();
    await both;

    await driver.stopUnit('unit-1');
    expect(await driver.openConsole('unit-1')).toBeNull();
  });

  it('runs a shell on a terminal in the unit: its size, a resize, its exit code', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.installImage('vol-1', 'debian-12');
    await runningMachine();
    const shell = await eventually('the shell', () =>
      driver
        .openShell('unit-1', driver.offeredShells(), { columns: 80, rows: 24 })
        .then((s) => s ?? undefined),
    );
    let seen = '';
    shell.onData((chunk) => (seen += chunk.toString('utf8')));
    const exited = new Promise<number>((resolve) => shell.onExit(resolve));
    shell.write(Buffer.from('stty size\n'));
    await eventually('the first size', async () => (/24 80\r?\n/.test(seen) ? true : undefined));
    shell.resize({ columns: 100, rows: 30 });
    // LXD takes a resize on its control stream and keystrokes on the terminal's, in no order between them,
    // so the size is asked until the new one shows (at once locally). And the exit goes on its own line once
    // the size is read: LXD 5.0 may drop what a command writes as it exits (canonical/lxd#12229, #12381).
    await eventually('the new size', async () => {
      const from = seen.length;
      shell.write(Buffer.from('stty size\n'));
      const size = await eventually('a size', async () => /(\d+ \d+)\r?\n/.exec(seen.slice(from))?.[1]);
      return size === '30 100' ? true : undefined;
    });
    shell.write(Buffer.from('exit 3\n'));
    expect(await exited).toBe(3);
    expect(await driver.openShell('unit-1', ['no-such-shell'], { columns: 80, rows: 24 })).toBeNull();
    await driver.stopUnit('unit-1');
    expect(await driver.openShell('unit-1', driver.offeredShells(), { columns: 80, rows: 24 })).toBeNull();
  });

  it("reaches a volume's files through the confined layer, which the unit's programs may then change", async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', spec(1));
    // The program writes beside a file the platform wrote, in a directory the platform made, then adds to
    // that file. b.txt is written once, before a.txt changes: a rewrite every tick would truncate it under
    // the test's read (CI once read '').
    const script = [
      "const fs = require('node:fs');",
      'setInterval(() => {',
      "  try { const t = fs.readFileSync('in/a.txt', 'utf8');",
      "    if (t.includes('+unit')) return;",
      "    fs.writeFileSync('in/b.txt', 'unit');",
      "    fs.appendFileSync('in/a.txt', '+unit'); } catch {}",
      '}, 100);',
    ].join('\n');
    await driver.startUnit({
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', script],
    });
    await acknowledged(1);
    const files = driver.volumeFiles('vol-1')!;
    await files.write('/in/a.txt', 'platform');
    expect(await probe.readVolumeFile('vol-1', 'in/a.txt')).toMatch(/^platform/);
    await eventually('the unit changed it', async () =>
      (await probe.readVolumeFile('vol-1', 'in/a.txt')) === 'platform+unit' ? true : undefined,
    );
    expect((await files.read('/in/b.txt')).content).toBe('unit');
    expect((await files.list('/in')).entries.map((e) => e.name).sort()).toEqual(['a.txt', 'b.txt']);
    await expect(driver.volumeFiles('no-such-volume')!.list('/')).rejects.toThrow();
  });

  it('makes a private port of the unit reachable at its address from this machine (RCON)', async () => {
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await driver.writeUnitSignal('unit-1', spec(1));
    // An address of the driver's unit address space (local: a network namespace's; LXD: the member's
    // loopback) and a port of this test alone.
    const address = unitAddressCandidate(randomUUID(), 0, addressSpaceOf(subject.name));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const script = [
      "const net = require('node:net');",
      `net.createServer((s) => s.end('private ' + process.env.SVC_BIND_ADDRESS + '\\n')).listen(${port}, process.env.SVC_BIND_ADDRESS);`,
    ].join('\n');
    await driver.startUnit({
      id: 'unit-1',
      kind: 'workload',
      volumeId: 'vol-1',
      command: [process.execPath, '-e', script],
      address,
      privatePorts: [{ protocol: 'tcp', port }],
    });
    const said = await eventually('the private port', () => readFrom(address, port));
    expect(said).toBe(`private ${address}\n`);
  });

  it('snapshots a volume and restores it whole; a damaged snapshot is refused, the volume untouched', async () => {
    expect(driver.capabilities().snapshots).toBe(true);
    await driver.ensureVolume({ id: 'vol-1', sizeGb: 1 });
    await probe.writeVolumeFile('vol-1', 'world/level.dat', 'day 1');
    await probe.writeVolumeFile('vol-1', 'server.properties', 'motd=hello');
    const snap = { id: 'snap-1', volumeId: 'vol-1' };
    const seen: number[] = [];
    const info = await driver.createSnapshot(snap, { onProgress: (done) => seen.push(done) });
    expect(info.sizeBytes).toBeGreaterThan(0);
    expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(seen.at(-1)).toBeGreaterThan(0);
    // Called again it answers the snapshot made, not a new one.
    expect(await driver.createSnapshot(snap)).toEqual(info);

    await probe.writeVolumeFile('vol-1', 'world/level.dat', 'day 2');
    await probe.writeVolumeFile('vol-1', 'later.txt', 'after');
    await driver.restoreSnapshot(snap, info);
    expect(await probe.readVolumeFile('vol-1', 'world/level.dat')).toBe('day 1');
    expect(await probe.readVolumeFile('vol-1', 'later.txt')).toBeNull();
    expect((await probe.volumeEntries('vol-1'))!.sort()).toEqual(['server.properties', 'world']);

    await probe.writeVolumeFile('vol-1', 'later.txt', 'after');
    const wrong = { ...info, sha256: '0'.repeat(64) };
    await expect(driver.restoreSnapshot(snap, wrong)).rejects.toBeInstanceOf(SnapshotIntegrityError);
    await expect(
      driver.restoreSnapshot(snap, { ...info, sizeBytes: info.sizeBytes + 1 }),
    ).rejects.toBeInstanceOf(SnapshotIntegrityError);
    expect(await probe.readVolumeFile('vol-1', 'later.txt')).toBe('after');

    await driver.deleteSnapshot(snap);
    await driver.deleteSnapshot(snap);
    await expect(driver.restoreSnapshot(snap, info)).rejects.toBeInstanceOf(SnapshotIntegrityError);
    expect(await probe.readVolumeFile('vol-1', 'later.txt')).toBe('after');
  });
});
