// The unit the agent runs, from unit.json (written by the local driver from a UnitSpec).
import { readFile } from 'node:fs/promises';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';
import type { UnitLimits, UnitSpec } from '../substrate/driver.js';
import { UNIT_FILES } from '../substrate/local/layout.js';

export interface AgentUnit {
  id: string;
  kind: 'machine' | 'workload';
  volumeId: string;
  /** What a workload runs; null for a machine and for a workload that is the agent alone. */
  command: string[] | null;
  env: Record<string, string>;
  /** The unit's own address (SVC_BIND_ADDRESS); null: none given, the programs choose. */
  address: string | null;
  /** The plan's CPUs and memory (null: none given, no limits but the task cap). */
  limits: UnitLimits | null;
}

export async function readUnit(unitDir: string): Promise<AgentUnit> {
  const raw = JSON.parse(await readFile(join(unitDir, UNIT_FILES.unit), 'utf8')) as Partial<UnitSpec>;
  if (typeof raw.id !== 'string' || typeof raw.volumeId !== 'string')
    throw new Error('unit.json lacks id or volumeId');
  if (raw.kind !== 'machine' && raw.kind !== 'workload') throw new Error('unit.json has no valid kind');
  const command = raw.command ?? null;
  if (command !== null && !(Array.isArray(command) && command.length > 0 && command.every(isString))) {
    throw new Error('unit.json command must be a non-empty array of strings or null');
  }
  const env = raw.env ?? {};
  if (typeof env !== 'object' || !Object.values(env).every(isString))
    throw new Error('unit.json env must map names to strings');
  const address = raw.address ?? null;
  if (address !== null && !(typeof address === 'string' && isIPv4(address)))
    throw new Error('unit.json address must be an IPv4 address or null');
  const limits = raw.limits ?? null;
  if (limits !== null && !(isCount(limits.cpu) && isCount(limits.memoryMb)))
    throw new Error('unit.json limits must give whole cpu and memoryMb');
  return {
    id: raw.id,
    kind: raw.kind,
    volumeId: raw.volumeId,
    command: raw.kind === 'machine' ? null : command,
    env,
    address,
    limits,
  };
}

function isCount(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) > 0;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}
