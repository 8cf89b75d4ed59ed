// Where a new volume (and so its unit: a `dir` volume lives on one member, and its instance runs there)
// goes in a cluster, and which members answer. With LXD_TARGET set, that member; otherwise an online
// member chosen by rendezvous hashing of the volume's name: new volumes spread evenly over the members,
// parallel provisionings need no shared counter (LXD's own scheduler places instances, not custom
// volumes, which a create without a target puts on the member that was asked), and a job that dies and
// runs again picks the same member while the membership is the same.
import { createHash } from 'node:crypto';
import type { LxdClient } from './client.js';

export interface Member {
  name: string;
  /** LXD's word: Online, Offline, Evacuated, Blocked... */
  status: string;
}

/** The cluster's members, or null for a server that is not clustered. */
export async function clusterMembers(client: LxdClient): Promise<Member[] | null> {
  const cluster = (await client.call<{ enabled: boolean }>('GET', '/1.0/cluster')).metadata;
  if (!cluster.enabled) return null;
  const members = await client.call<{ server_name: string; status: string }[]>(
    'GET',
    '/1.0/cluster/members',
    undefined,
    { recursion: '1' },
  );
  return members.metadata.map((m) => ({ name: m.server_name, status: m.status }));
}

/** The member with the highest score for `key` (rendezvous hashing). */
export function rendezvous(memberNames: readonly string[], key: string): string | undefined {
  let best: { name: string; score: bigint } | undefined;
  for (const name of memberNames) {
    const score = createHash('sha256').update(name).update('\0').update(key).digest().readBigUInt64BE(0);
    if (!best || score > best.score || (score === best.score && name < best.name)) best = { name, score };
  }
  return best?.name;
}

/** The member a new volume named `volumeName` goes to; undefined on a server that is not clustered. */
export async function placeVolume(
  client: LxdClient,
  volumeName: string,
  configured: string | undefined,
): Promise<string | undefined> {
  if (configured) return configured;
  const members = await clusterMembers(client);
  if (!members) return undefined;
  const online = members.filter((m) => m.status === 'Online').map((m) => m.name);
  const chosen = rendezvous(online, volumeName);
  if (!chosen) throw new Error('no member of the LXD cluster is online');
  return chosen;
}

/** Whether the member `name` answers its cluster (a server that is not clustered: location `none`). */
export async function memberOnline(client: LxdClient, name: string): Promise<boolean> {
  if (!name || name === 'none') return true;
  const member = await client.find<{ status: string }>(`/1.0/cluster/members/${encodeURIComponent(name)}`);
  return member?.status === 'Online';
}

/**
 * Whether every member of the cluster is online (LXD's heartbeat record, read from its database: no
 * member is asked). False when LXD cannot say: the caller then takes the way that works with a member down.
 */
export async function everyMemberOnline(client: LxdClient): Promise<boolean> {
  const members = await client
    .call<{ status: string }[]>('GET', '/1.0/cluster/members', undefined, { recursion: '1' })
    .catch(() => null);
  return members !== null && members.metadata.every((m) => m.status === 'Online');
}
