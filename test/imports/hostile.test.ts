// Imports against hostile SFTP servers (DECISIONS.md §8 "Imports against hostile servers"; issue 37),
// each a peer of test/support/hostile-sftp.ts: a listing that never ends and a bottomless tree end the
// import `failed` naming the limit, with this process (the API and its worker run here) alive and its
// memory bounded; a remote silent while connecting, signing in, listing or sending a file ends it
// `failed` naming the stall once 30 s pass on the app's clock (frozen here, advanced by the test: the
// deadline is DECISIONS' own, no sleep waits it out); a cancel while the listing hangs ends it within
// 5 s. No temporary file of the import stays in the volume.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startHostileSftp, type HostileMode, type HostileSftp } from '../support/hostile-sftp.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let smtp: TestSmtp;
let app: TestApp;
let staff: Staff;
/** A stopped service for each test, so one test's import never holds another's service. */
const sites: Provisioned[] = [];
let site: Provisioned;
const peers: HostileSftp[] = [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', IMPORT_ALLOWED_NETWORKS: '127.0.0.1/32' },
  });
  app.clock.set(new Date());
  staff = await staffMember(app, smtp, 'imh-staff', ['manage_services']);
  const orgId = (
    await staff.plain.organizationCreate({ body: { name: 'Hostile', slug: `hostile-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (await staff.plain.projectCreate({ path: { id: orgId }, body: { name: 'Hostile', slug: 'hostile' } })).id;
  sites.push(
    ...(await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const p = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: `Target ${i}` });
        const stop = await staff.plain.serviceInstancePower({ path: { id: p.serviceInstanceId }, body: { action: 'stop' } });
        expect((await awaitOperation(staff.plain, p.serviceInstanceId, stop.operation_id, 120_000)).status).toBe('succeeded');
        return p;
      }),
    )),
  );
}, 300_000);

beforeEach(() => {
  site = sites.shift()!;
});

afterAll(async () => {
  for (const peer of peers) await peer.close();
  await app?.close();
  await smtp?.close();
});

const volume = (...rest: string[]) => join(app.substrateDir, 'volumes', site.volumeResourceId, ...rest);

async function hostile(mode: HostileMode): Promise<HostileSftp> {
  const peer = await startHostileSftp(mode);
  peers.push(peer);
  return peer;
}

async function startImport(peer: HostileSftp) {
  app.clock.advance(1000);
  return staff.plain.importStart({
    path: { id: site.serviceInstanceId },
    body: { host: '127.0.0.1', port: peer.port, username: peer.username, password: peer.password, remote_path: '/' },
  });
}

/** The import once its operation ended, within `timeoutMs` of real time. */
async function ended(accepted: { id: string; operation_id: string }, timeoutMs: number) {
  await awaitOperation(staff.plain, site.serviceInstanceId, accepted.operation_id, timeoutMs);
  return staff.plain.importGet({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
}

/** Temporary files of imports anywhere in the volume. */
async function leftovers(): Promise<string[]> {
  const names = await readdir(volume(), { recursive: true });
  return names.filter((n) => n.split('/').at(-1)!.startsWith('.svc-import-'));
}

const MiB = 1024 * 1024;

describe('limits', () => {
  it('ends a listing that never ends at 100,000 entries, failed, with the API alive and its memory bounded', async () => {
    const peer = await hostile('endless-listing');
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    try {
      const done = await ended(await startImport(peer), 120_000);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(/more than 100,000 entries/);
      // It stopped reading there: a batch of 200 past the limit at most.
      expect(peer.namesSent).toBeLessThanOrEqual(100_200);
    } finally {
      clearInterval(sampler);
    }
    // The tree of 100,000 names, the peer's side in this process too, and the garbage of both.
    expect((peak - before) / MiB).toBeLessThan(256);
    expect((await staff.plain.importList({ path: { id: site.serviceInstanceId } })).imports.length).toBeGreaterThan(0);
    expect(await leftovers()).toEqual([]);
  });

  it('ends a bottomless tree at 64 levels, failed, creating nothing', async () => {
    const peer = await hostile('bottomless');
    const done = await ended(await startImport(peer), 60_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/deeper than 64 levels/);
    expect(peer.deepest).toBe(64);
    await expect(readdir(volume('d'))).rejects.toThrow();
  });
});

describe('stalls', () => {
  it.each([
    ['silent-connect', /stopped answering for 30 s while connecting/],
    ['silent-auth', /stopped answering for 30 s while signing in/],
    ['silent-listing', /stopped answering for 30 s while listing \//],
    ['stalled-transfer', /stopped answering for 30 s while reading \/big\.bin/],
  ] as const)('%s: fails once the remote is silent for 30 s on the clock, naming the stall', async (mode, error) => {
    const peer = await hostile(mode);
    const accepted = await startImport(peer);
    await peer.silent;
    // 29 s of silence is not a stall yet.
    app.clock.advance(29_000);
    await new Promise((r) => setTimeout(r, 600));
    expect((await staff.plain.importGet({ path: { id: site.serviceInstanceId, import_id: accepted.id } })).status).toBe(
      'running',
    );
    app.clock.advance(2_000);
    const done = await ended(accepted, 10_000);
    expect(done).toMatchObject({ status: 'failed', cancel_requested: false });
    expect(done.error).toMatch(error);
    expect(await leftovers()).toEqual([]);
  });
});

describe('cancel', () => {
  it('ends an import whose listing hangs within 5 s of the cancel', async () => {
    const peer = await hostile('silent-listing');
    const accepted = await startImport(peer);
    await peer.silent;
    const asked = Date.now();
    const answer = await staff.plain.importCancel({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
    expect(answer.cancel_requested).toBe(true);
    const done = await ended(accepted, 5_000);
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(done).toMatchObject({ status: 'cancelled', error: null });
  });

  it('sweeps temporary files an earlier import left, and leaves none of its own after a cancelled transfer', async () => {
    await writeFile(volume('.svc-import-0123456789abcdef.tmp'), 'left by a killed run');
    const peer = await hostile('stalled-transfer');
    const accepted = await startImport(peer);
    await peer.silent;
    // Its own temporary file is there now, the earlier one gone.
    expect((await leftovers()).length).toBe(1);
    expect(await leftovers()).not.toContain('.svc-import-0123456789abcdef.tmp');
    await staff.plain.importCancel({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
    const done = await ended(accepted, 5_000);
    expect(done.status).toBe('cancelled');
    expect(await leftovers()).toEqual([]);
  });
});
