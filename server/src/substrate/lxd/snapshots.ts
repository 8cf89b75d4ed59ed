// Snapshots of the LXD substrate are LXD's own custom-volume snapshots: taken, kept and restored by the
// storage driver (LXD refuses a restore while an instance using the volume runs, so a restore stops the
// unit first, as the platform's restore does). LXD snapshots cannot be changed through its API, so what
// the platform checks before a restore is that the snapshot is the one it took: its description carries a
// random mark and the size measured when it was taken, and the recorded SHA-256 is of that identity.
// A snapshot deleted and taken again under the same name is therefore refused, as the contract asks.
import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SnapshotIntegrityError, type SnapshotInfo, type TransferOptions } from '../driver.js';
import { isNotFound, type LxdClient } from './client.js';
import { onMember, type Pool, type VolumeRecord } from './volumes.js';

const run = promisify(execFile);
const MARK = /^svc-snapshot ([0-9a-f]{32}) (\d+)$/;

interface SnapshotRecord {
  name: string;
  description: string;
}

const snapshotsPath = (pool: Pool, volume: VolumeRecord) =>
  `/1.0/storage-pools/${pool.name}/volumes/custom/${volume.name}/snapshots`;

export async function takeSnapshot(
  client: LxdClient,
  pool: Pool,
  volume: VolumeRecord,
  name: string,
  /** Bytes on the volume now (where its files are reached: volumeBytes, or the volume server). */
  measure: () => Promise<number>,
  options: TransferOptions = {},
): Promise<SnapshotInfo> {
  const at = onMember(volume);
  const existing = await client.find<SnapshotRecord>(`${snapshotsPath(pool, volume)}/${name}`, at);
  const taken = existing ? infoOf(volume, existing) : null;
  if (taken) return taken;
  const size = Math.max(1, await measure());
  options.onProgress?.(0, size);
  if (!existing) await client.run('POST', snapshotsPath(pool, volume), { name }, at);
  const description = `svc-snapshot ${randomBytes(16).toString('hex')} ${size}`;
  await client.call('PUT', `${snapshotsPath(pool, volume)}/${name}`, { description }, at);
  options.onProgress?.(size, size);
  return infoOf(volume, { name, description })!;
}

export async function restoreSnapshot(
  client: LxdClient,
  pool: Pool,
  volume: VolumeRecord | null,
  name: string,
  expected: SnapshotInfo,
  options: TransferOptions = {},
): Promise<void> {
  if (!volume) throw new SnapshotIntegrityError(`the volume of snapshot ${name} is missing`);
  const at = onMember(volume);
  const record = await client.find<SnapshotRecord>(`${snapshotsPath(pool, volume)}/${name}`, at);
  const info = record ? infoOf(volume, record) : null;
  if (!info) throw new SnapshotIntegrityError(`snapshot ${name} of ${volume.name} is missing`);
  if (info.sha256 !== expected.sha256 || info.sizeBytes !== expected.sizeBytes)
    throw new SnapshotIntegrityError(`snapshot ${name} of ${volume.name} is not the one taken`);
  options.onProgress?.(0, info.sizeBytes);
  await client.call('PUT', `/1.0/storage-pools/${pool.name}/volumes/custom/${volume.name}`, { restore: name }, at);
  options.onProgress?.(info.sizeBytes, info.sizeBytes);
}

export async function dropSnapshot(
  client: LxdClient,
  pool: Pool,
  volume: VolumeRecord | null,
  name: string,
): Promise<void> {
  if (!volume) return;
  try {
    await client.run('DELETE', `${snapshotsPath(pool, volume)}/${name}`, undefined, onMember(volume));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

function infoOf(volume: VolumeRecord, record: SnapshotRecord): SnapshotInfo | null {
  const mark = MARK.exec(record.description);
  if (!mark) return null;
  const sha256 = createHash('sha256').update(`${volume.name}/${record.name} ${record.description}`).digest('hex');
  return { sizeBytes: Number(mark[2]), sha256 };
}

/** Bytes under a directory of this machine (at least 1: an empty volume still has its directory). */
export async function volumeBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-s', '-b', dir]);
  return Math.max(1, Number(stdout.split('\t')[0]));
}
