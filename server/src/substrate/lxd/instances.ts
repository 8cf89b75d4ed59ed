// Units of the LXD substrate: one instance (a system container) per unit, started from the unit image
// (image.ts), its volume attached at the path the local substrate uses, its agent run by the image's
// PID 1. The unit's files (unit.json, the contract, the agent's acknowledgement) are inside the instance
// and reached through LXD's file API, so a unit may run on any member of the cluster.
import { posix } from 'node:path';
import { isNotFound, lxdError, readAll, type LxdClient } from './client.js';

export interface Instance {
  name: string;
  status: string;
  location: string;
  config: Record<string, string>;
}

export async function findInstance(client: LxdClient, name: string): Promise<Instance | null> {
  return client.find<Instance>(`/1.0/instances/${name}`);
}

/** An instance as the cluster's listing shows it, which answers at once even when its member is down. */
export interface ListedInstance {
  name: string;
  /** `Error` (status code 112) for an instance whose member does not answer. */
  status: string;
  location: string;
}

export async function listedInstance(client: LxdClient, name: string): Promise<ListedInstance | null> {
  const listed = await client.call<ListedInstance[]>('GET', '/1.0/instances', undefined, {
    recursion: '1',
    filter: `name eq ${name}`,
  });
  return listed.metadata.find((i) => i.name === name) ?? null;
}

export async function setState(client: LxdClient, name: string, action: 'start' | 'stop', force = false) {
  await client.run('PUT', `/1.0/instances/${name}/state`, { action, timeout: STOP_TIMEOUT_S, force });
}

/** Seconds LXD waits for PID 1 to stop the agent (which stops its workload) before it kills the instance. */
export const STOP_TIMEOUT_S = 15;

/** A file of the instance, or null when it is not there. */
export async function readInstanceFile(
  client: LxdClient,
  name: string,
  path: string,
): Promise<string | null> {
  const res = await client.raw({ method: 'GET', path: `/1.0/instances/${name}/files`, query: { path } });
  const body = await readAll(res);
  if (res.statusCode === 404) return null;
  if ((res.statusCode ?? 500) >= 400) {
    const message = safeError(body);
    if (/not found|no such file/i.test(message)) return null;
    throw lxdError(res.statusCode ?? 500, message);
  }
  return body.toString('utf8');
}

/** Writes a file into the instance (its parent directories made first), owned by the instance's root. */
export async function writeInstanceFile(
  client: LxdClient,
  name: string,
  path: string,
  content: string,
  mode = 0o600,
): Promise<void> {
  await makeInstanceDirs(client, name, posix.dirname(path));
  await push(
    client,
    name,
    path,
    { 'x-lxd-type': 'file', 'x-lxd-mode': mode.toString(8).padStart(4, '0') },
    content,
  );
}

export async function makeInstanceDirs(client: LxdClient, name: string, dir: string): Promise<void> {
  let path = '';
  for (const part of dir.split('/').filter(Boolean)) {
    path += `/${part}`;
    await push(client, name, path, { 'x-lxd-type': 'directory', 'x-lxd-mode': '0700' }, '');
  }
}

async function push(
  client: LxdClient,
  name: string,
  path: string,
  headers: Record<string, string>,
  body: string,
) {
  const res = await client.raw({
    method: 'POST',
    path: `/1.0/instances/${name}/files`,
    query: { path },
    headers: {
      ...headers,
      'x-lxd-uid': '0',
      'x-lxd-gid': '0',
      'x-lxd-write': 'overwrite',
      'content-type': 'application/octet-stream',
    },
    body,
  });
  const answer = await readAll(res);
  if ((res.statusCode ?? 500) >= 400) {
    const message = safeError(answer);
    // A directory that is there already.
    if (headers['x-lxd-type'] === 'directory' && /exists/i.test(message)) return;
    throw lxdError(res.statusCode ?? 500, message);
  }
}

/** Runs a command in the running instance; answers its exit code and, when asked, its output. */
export async function execIn(
  client: LxdClient,
  name: string,
  command: string[],
  options: { output?: boolean } = {},
): Promise<{ code: number; stdout: string }> {
  const op = await client.run('POST', `/1.0/instances/${name}/exec`, {
    command,
    'wait-for-websocket': false,
    interactive: false,
    'record-output': options.output ?? false,
    environment: { PATH: '/bin:/usr/bin' },
  });
  const meta = (op.metadata ?? {}) as { return?: number; output?: Record<string, string> };
  let stdout = '';
  const log = meta.output?.['1']?.split('?')[0];
  if (options.output && log) {
    const res = await client.raw({ method: 'GET', path: log });
    stdout = (await readAll(res)).toString('utf8');
    await client.call('DELETE', log).catch(() => undefined);
  }
  return { code: meta.return ?? -1, stdout };
}

export async function deleteInstance(client: LxdClient, name: string): Promise<void> {
  try {
    await client.run('DELETE', `/1.0/instances/${name}`);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

function safeError(body: Buffer): string {
  try {
    return (JSON.parse(body.toString('utf8')) as { error?: string }).error ?? 'error';
  } catch {
    return body.toString('utf8').slice(0, 200);
  }
}

/**
 * Devices that mask the default profile's network devices (`type: none`), for instances that must reach
 * nothing but through the platform: units (their ports are proxy devices the edge forwards to) and the
 * volume hosts. A cluster whose default profile gives a NIC (`lxd init`'s usual bridge) would otherwise
 * put every unit on the member's network, past the edge and its firewall.
 */
export async function withoutNetwork(client: LxdClient): Promise<Record<string, Record<string, string>>> {
  const profile = await client.find<{ devices: Record<string, Record<string, string>> }>(
    '/1.0/profiles/default',
  );
  const masked: Record<string, Record<string, string>> = {};
  for (const [name, device] of Object.entries(profile?.devices ?? {}))
    if (device.type === 'nic' || device.type === 'infiniband') masked[name] = { type: 'none' };
  return masked;
}

/**
 * Sets the instance's own devices to exactly `devices`, the rest of its configuration as `full` (its
 * GET) has it. PUT, not PATCH: a PATCH merges devices and cannot take one away.
 */
export async function putDevices(
  client: LxdClient,
  name: string,
  full: Record<string, unknown>,
  devices: Record<string, unknown>,
): Promise<void> {
  await client.run('PUT', `/1.0/instances/${name}`, {
    architecture: full.architecture,
    config: full.config,
    description: full.description,
    ephemeral: full.ephemeral,
    profiles: full.profiles,
    stateful: full.stateful,
    devices,
  });
}
