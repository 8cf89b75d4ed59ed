// A cluster member that disappears (issue 24: "a member that disappears marks its units degraded, never
// lost silently"): a web app placed on the second member of a cluster of its own, whose LXD daemon is then
// killed. Once LXD calls the member offline, the converge marks the workload `unreachable` (not stopped,
// and not started again anywhere), the driver's calls on it fail with the error operations show their
// caller, and when the member is back the next converge finds the unit running and says so.
// Runs where LXD is installed and this is root; the cluster is its own, so the shared one is not disturbed.
import { randomUUID } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lxdInstalled, startLxdCluster, type LxdCluster } from '../../scripts/lxd/cluster.js';
import { SubstrateUnreachableError } from '../../server/src/substrate/driver.js';
import { LxdClient } from '../../server/src/substrate/lxd/client.js';
import { clusterMembers } from '../../server/src/substrate/lxd/placement.js';
import { startTestApp, type TestApp } from '../support/app.js';
import type { Caller } from '../support/organizations.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { eventually } from './drivers.js';

// The shared cluster's presence says the machine can run LXD (installed, root, and it started).
const CAPABLE = lxdInstalled() && !!inject('lxdUrl');

/** The pid of the LXD daemon of the member kept in `dir`. */
async function daemonPid(dir: string): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(`--logfile=${join(dir, 'lxd.log')}`)) return Number(entry);
  }
  throw new Error(`no LXD daemon runs for ${dir}`);
}

describe.skipIf(!CAPABLE)('a cluster member that stops answering', () => {
  const dir = join(tmpdir(), `svc-test-lxd-members-${randomUUID().slice(0, 8)}`);
  let cluster: LxdCluster;
  let lxd: LxdClient;
  let app: TestApp;
  let smtp: TestSmtp;
  let owner: Caller;
  let site: Provisioned;

  const memberStatus = async (name: string) =>
    (await clusterMembers(lxd))?.find((m) => m.name === name)?.status;
  const primaryStatus = async () =>
    (await owner.api.serviceInstanceResourceList({ path: { id: site.serviceInstanceId } })).resources.find(
      (r) => r.id === site.primaryResourceId,
    )?.status;

  beforeAll(async () => {
    cluster = await startLxdCluster(dir, 2);
    lxd = new LxdClient({ url: cluster.url, project: 'default' });
    // LXD's shortest wait before it calls a silent member offline (default 20 s).
    await lxd.call('PATCH', '/1.0', { config: { 'cluster.offline_threshold': '11' } });
    smtp = await startTestSmtp();
    app = await startTestApp({
      env: { SMTP_URL: smtp.url, SUBSTRATE: 'lxd', LXD_URL: cluster.url, LXD_TARGET: 'm2' },
    });
    const customer = await serviceCustomer(app, smtp, 'members');
    owner = customer.owner;
    const { staff, projectId } = customer;
    site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
  }, 300_000);
  afterAll(async () => {
    await app?.close();
    await smtp?.close();
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('marks the unit unreachable while its member is down, and running again when it is back', async () => {
    expect(await primaryStatus()).toBe('running');
    const instance = `svc-${site.primaryResourceId}`;
    const placed = await lxd.call<{ location: string }>('GET', `/1.0/instances/${instance}`);
    expect(placed.metadata.location).toBe('m2');

    process.kill(await daemonPid(cluster.members[1]!.dir), 'SIGKILL');
    await eventually(
      'm2 offline',
      async () => ((await memberStatus('m2')) === 'Offline' ? true : undefined),
      90_000,
    );
    await app.worker!.run('reconcile_units');
    expect(await primaryStatus()).toBe('unreachable');
    // The driver's own word, with and without the agent's acknowledgement (which nobody can read now).
    expect(await app.substrate!.unitStatus(site.primaryResourceId)).toEqual({
      state: 'unreachable',
      observedGeneration: null,
      lastError: null,
    });
    expect(await app.substrate!.unitState(site.primaryResourceId)).toBe('unreachable');
    // Not started anywhere else: the only instance of the unit is still the one on m2.
    const { metadata: listed } = await lxd.call<{ name: string; location: string; status: string }[]>(
      'GET',
      '/1.0/instances',
      undefined,
      { recursion: '1' },
    );
    expect(listed.filter((i) => i.name === instance)).toEqual([
      expect.objectContaining({ location: 'm2', status: 'Error' }),
    ]);
    // What an operation would meet: an error whose message the operation shows its caller.
    await expect(app.substrate!.stopUnit(site.primaryResourceId)).rejects.toBeInstanceOf(
      SubstrateUnreachableError,
    );
    // A second converge changes nothing while the member stays away.
    await app.worker!.run('reconcile_units');
    expect(await primaryStatus()).toBe('unreachable');

    // The member's daemon again (startLxdCluster starts the members that do not answer).
    await startLxdCluster(dir, 2);
    await eventually(
      'm2 online',
      async () => ((await memberStatus('m2')) === 'Online' ? true : undefined),
      90_000,
    );
    await app.worker!.run('reconcile_units');
    expect(await primaryStatus()).toBe('running');
    const back = await lxd.call<{ status: string; location: string }>('GET', `/1.0/instances/${instance}`);
    expect(back.metadata).toMatchObject({ status: 'Running', location: 'm2' });
  }, 300_000);
});
