// The file routes through the real stack (document 2 §4 "Files"; DECISIONS.md §6 "Files", "Access",
// "Audit"): a web app provisioned on the local substrate, its volume a real directory, driven by the SDK.
// Every refusal reads back that the volume (and the canary outside it) did not change; Wings' symbolic
// link CVEs are replayed through the HTTP API.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@svcplatform/sdk';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { SECRET } from './canary.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let web: Provisioned;
let vps: Provisioned;
let staff: Staff;
let volume: string;
let outside: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  staff = await staffMember(app, smtp, 'fil-staff', ['manage_services']);
  [owner, member, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'fil-owner'),
    signedIn(app, smtp, 'fil-member'),
    signedIn(app, smtp, 'fil-billing'),
    signedIn(app, smtp, 'fil-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Files', slug: `files-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [web, vps] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' }),
  ]);
  volume = join(app.substrateDir, 'volumes', web.volumeResourceId);
  // A canary outside the volume, which links inside it point at.
  outside = join(app.substrateDir, `outside-${randomUUID()}`);
  await mkdir(join(outside, 'sub'), { recursive: true });
  await writeFile(join(outside, 'secret.txt'), SECRET);
  await writeFile(join(outside, 'sub', 'deep.txt'), SECRET);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

async function canaryIntact(): Promise<void> {
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  expect(await readFile(join(outside, 'sub', 'deep.txt'), 'utf8')).toBe(SECRET);
  expect((await readdir(outside)).sort()).toEqual(['secret.txt', 'sub']);
}

/** The volume's tree as names and contents (what a refusal must leave as it was). */
async function tree(dir = volume, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(`${prefix}${entry.name}/`, ...(await tree(full, `${prefix}${entry.name}/`)));
    else if (entry.isSymbolicLink()) out.push(`${prefix}${entry.name} ->`);
    else out.push(`${prefix}${entry.name}=${(await readFile(full)).toString('base64')}`);
  }
  return out;
}

const at = (service = web, resourceId = service.volumeResourceId) => ({
  id: service.serviceInstanceId,
  resource_id: resourceId,
});

describe('reading and writing', () => {
  it('writes, reads, lists (normalised), makes directories and deletes, each write audited', async () => {
    const audits = (await auditEntries(app, orgId)).length;
    const dir = await owner.api.directoryCreate({ path: at(), body: { path: '/cfg/a/b' } });
    expect(dir).toMatchObject({ kind: 'directory', name: 'b', path: '/cfg/a/b', size_bytes: null });
    // Idempotent: a second make answers the same directory.
    expect(await owner.api.directoryCreate({ path: at(), body: { path: '/cfg/a/b/' } })).toMatchObject({
      path: '/cfg/a/b',
    });
    const written = await member.api.fileWrite({
      path: at(),
      query: { path: '//cfg/./a/settings.txt' },
      body: { content: 'motd=héllo\n' },
    });
    expect(written).toMatchObject({ kind: 'file', name: 'settings.txt', path: '/cfg/a/settings.txt' });
    expect(written.size_bytes).toBe(Buffer.byteLength('motd=héllo\n'));
    expect(await readFile(join(volume, 'cfg/a/settings.txt'), 'utf8')).toBe('motd=héllo\n');
    const read = await owner.api.fileRead({ path: at(), query: { path: '/cfg/a/settings.txt' } });
    expect(read).toEqual({ path: '/cfg/a/settings.txt', content: 'motd=héllo\n', size_bytes: written.size_bytes });
    // Through the workload's id: the same volume; any member reads (Billing too).
    const viaWorkload = await billing.api.fileList({ path: at(web, web.primaryResourceId), query: { path: '/cfg//a/' } });
    expect(viaWorkload.path).toBe('/cfg/a');
    expect(viaWorkload.truncated).toBe(false);
    expect(viaWorkload.entries.map((e) => `${e.kind}:${e.name}`).sort()).toEqual(['directory:b', 'file:settings.txt']);
    // Replaced atomically, its mode kept.
    await writeFile(join(volume, 'cfg/a/run.sh'), 'old', { mode: 0o750 });
    await owner.api.fileWrite({ path: at(), query: { path: '/cfg/a/run.sh' }, body: { content: 'new' } });
    expect(await readFile(join(volume, 'cfg/a/run.sh'), 'utf8')).toBe('new');
    expect((await stat(join(volume, 'cfg/a/run.sh'))).mode & 0o777).toBe(0o750);
    await owner.api.fileDelete({ path: at(), query: { path: '/cfg/a/run.sh' } });
    await owner.api.fileDelete({ path: at(), query: { path: '/cfg', recursive: true } });
    await expect(stat(join(volume, 'cfg'))).rejects.toThrow();
    const actions = (await auditEntries(app, orgId)).slice(audits).map((e) => e.action);
    expect(actions).toEqual([
      'file.directory_created',
      'file.directory_created',
      'file.written',
      'file.written',
      'file.deleted',
      'file.deleted',
    ]);
  });

  it('stops a listing at 1000 entries with truncated', async () => {
    await mkdir(join(volume, 'many'));
    await Promise.all(Array.from({ length: 1005 }, (_, i) => writeFile(join(volume, 'many', `f${i}`), '')));
    const listing = await owner.api.fileList({ path: at(), query: { path: '/many' } });
    expect(listing.entries).toHaveLength(1000);
    expect(listing.truncated).toBe(true);
    await rm(join(volume, 'many'), { recursive: true });
  });
});

describe('refusals (nothing changes)', () => {
  it('answers 400 invalid-path for .., NUL, relative and system paths on every route', async () => {
    await writeFile(join(volume, 'keep.txt'), 'keep');
    const before = await tree();
    for (const bad of ['/a/../keep.txt', '/..', 'keep.txt', '/a\0b', '/proc/self/environ', '/sys', '//dev/null']) {
      for (const attempt of [
        () => owner.api.fileList({ path: at(), query: { path: bad } }),
        () => owner.api.fileRead({ path: at(), query: { path: bad } }),
        () => owner.api.fileWrite({ path: at(), query: { path: bad }, body: { content: 'x' } }),
        () => owner.api.fileDelete({ path: at(), query: { path: bad, recursive: true } }),
        () => owner.api.directoryCreate({ path: at(), body: { path: bad } }),
        () => owner.api.fileDownloadTicketCreate({ path: at(), body: { path: bad } }),
      ]) {
        const got = await outcome(attempt());
        // One code whichever layer refuses: the NUL check every request passes, the spec's pattern
        // (a relative path in a body) or the file layer (DECISIONS.md §6, §8).
        expect(got, `${JSON.stringify(bad)} ${String(attempt)}`).toEqual([400, 'invalid-path']);
      }
    }
    for (const bad of ['/a/../keep.txt', '/proc/self/environ', '//dev/null', 'keep.txt']) {
      expect(await outcome(owner.api.fileRead({ path: at(), query: { path: bad } }))).toEqual([400, 'invalid-path']);
      expect(await outcome(owner.api.directoryCreate({ path: at(), body: { path: bad } }))).toEqual([
        400,
        'invalid-path',
      ]);
    }
    expect(await tree()).toEqual(before);
    await canaryIntact();
  });

  it('caps reads and writes at 1 MiB, refuses non-UTF-8, the root and a non-empty directory', async () => {
    await writeFile(join(volume, 'big.txt'), 'a'.repeat(1024 * 1024 + 1));
    await writeFile(join(volume, 'exact.txt'), 'b'.repeat(1024 * 1024));
    await writeFile(join(volume, 'bin.dat'), Buffer.from([0xff, 0xfe, 0x00, 0x80]));
    await mkdir(join(volume, 'full/inner'), { recursive: true });
    await writeFile(join(volume, 'full/inner/x'), 'x');
    const before = await tree();
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/big.txt' } }))).toEqual([
      422,
      'file-too-large',
    ]);
    expect((await owner.api.fileRead({ path: at(), query: { path: '/exact.txt' } })).size_bytes).toBe(1024 * 1024);
    expect(
      await outcome(
        owner.api.fileWrite({ path: at(), query: { path: '/exact.txt' }, body: { content: 'é'.repeat(512 * 1024 + 1) } }),
      ),
    ).toEqual([422, 'file-too-large']);
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/bin.dat' } }))).toEqual([
      422,
      'file-not-text',
    ]);
    expect(await outcome(owner.api.fileDelete({ path: at(), query: { path: '/', recursive: true } }))).toEqual([
      422,
      'mount-root',
    ]);
    expect(await outcome(owner.api.fileDelete({ path: at(), query: { path: '/full' } }))).toEqual([
      409,
      'directory-not-empty',
    ]);
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/full' } }))).toEqual([
      422,
      'is-a-directory',
    ]);
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/nope.txt' } }))).toEqual([404, 'not-found']);
    expect(
      await outcome(owner.api.fileWrite({ path: at(), query: { path: '/exact.txt/x' }, body: { content: '' } })),
    ).toEqual([422, 'not-a-directory']);
    expect(await outcome(owner.api.directoryCreate({ path: at(), body: { path: '/exact.txt/sub' } }))).toEqual([
      422,
      'not-a-directory',
    ]);
    expect(await tree()).toEqual(before);
    // A full 1 MiB write of multi-byte text passes (the JSON body is larger than the API's usual limit).
    const entry = await owner.api.fileWrite({
      path: at(),
      query: { path: '/exact.txt' },
      body: { content: 'é'.repeat(512 * 1024) },
    });
    expect(entry.size_bytes).toBe(1024 * 1024);
    await owner.api.fileDelete({ path: at(), query: { path: '/full', recursive: true } });
    // A write makes missing parent directories.
    await owner.api.fileWrite({ path: at(), query: { path: '/no/dir.txt' }, body: { content: 'made' } });
    expect(await readFile(join(volume, 'no/dir.txt'), 'utf8')).toBe('made');
    for (const name of ['big.txt', 'exact.txt', 'bin.dat', 'keep.txt', 'no']) {
      await rm(join(volume, name), { force: true, recursive: true });
    }
  });
});

describe('access', () => {
  it("is the 404 of an unknown id for Billing's writes, strangers, a product without files, another resource", async () => {
    await writeFile(join(volume, 'private.txt'), 'private');
    const before = await tree();
    const audits = (await auditEntries(app, orgId)).length;
    const unknown = await outcome(
      owner.api.fileList({ path: { id: randomUUID(), resource_id: web.volumeResourceId }, query: {} }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    const attempts = (caller: Caller, where: { id: string; resource_id: string }) => [
      () => caller.api.fileList({ path: where, query: { path: '/' } }),
      () => caller.api.fileRead({ path: where, query: { path: '/private.txt' } }),
      () => caller.api.fileWrite({ path: where, query: { path: '/private.txt' }, body: { content: 'x' } }),
      () => caller.api.fileDelete({ path: where, query: { path: '/private.txt' } }),
      () => caller.api.directoryCreate({ path: where, body: { path: '/made' } }),
      () => caller.api.fileDownloadTicketCreate({ path: where, body: { path: '/private.txt' } }),
      () => caller.api.fileSessionTicketCreate({ path: where }),
    ];
    for (const attempt of [
      ...attempts(billing, at()).slice(2),
      ...attempts(stranger, at()),
      ...attempts(owner, at(vps)),
      ...attempts(owner, at(vps, vps.primaryResourceId)),
      ...attempts(owner, { id: web.serviceInstanceId, resource_id: vps.volumeResourceId }),
      ...attempts(owner, { id: web.serviceInstanceId, resource_id: randomUUID() }),
    ]) {
      expect(await outcome(attempt())).toEqual(unknown);
    }
    expect(await tree()).toEqual(before);
    expect((await auditEntries(app, orgId)).length).toBe(audits);
    await rm(join(volume, 'private.txt'));
  });

  it('lets a read-only token read but not write (404)', async () => {
    const { secret } = await owner.api.meApiTokenCreate({
      body: { name: 'reader', authorization: { grants: [{ capability: 'services.read', scope: { kind: 'all' } }] } },
    });
    const reader = createClient({ baseUrl: app.baseUrl, token: secret, retries: 0 });
    await writeFile(join(volume, 'r.txt'), 'readable');
    expect((await reader.fileRead({ path: at(), query: { path: '/r.txt' } })).content).toBe('readable');
    expect(await outcome(reader.fileWrite({ path: at(), query: { path: '/r.txt' }, body: { content: 'no' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await readFile(join(volume, 'r.txt'), 'utf8')).toBe('readable');
    await rm(join(volume, 'r.txt'));
  });
});

describe("Wings' symbolic-link CVEs through the API", () => {
  it('never reads, writes, lists or deletes through a link leaving the volume', async () => {
    await symlink(join(outside, 'secret.txt'), join(volume, 'link.txt'));
    await symlink(outside, join(volume, 'linkdir'));
    await mkdir(join(volume, 'real'));
    await symlink(outside, join(volume, 'real', 'escape'));
    // CVE-2023-25152 (write through a link), CVE-2023-25168 (read through one), CVE-2024-27102 (a link
    // as a parent directory), the recursive delete that followed a link.
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/link.txt' } }))).toEqual([404, 'not-found']);
    expect(await outcome(owner.api.fileRead({ path: at(), query: { path: '/linkdir/secret.txt' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await outcome(owner.api.fileList({ path: at(), query: { path: '/linkdir' } }))).toEqual([404, 'not-found']);
    expect(await outcome(owner.api.fileList({ path: at(), query: { path: '/real/escape/sub' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(
      await outcome(owner.api.fileWrite({ path: at(), query: { path: '/linkdir/new.txt' }, body: { content: 'x' } })),
    ).toEqual([422, 'not-a-directory']);
    expect(await outcome(owner.api.directoryCreate({ path: at(), body: { path: '/linkdir/made' } }))).toEqual([
      422,
      'not-a-directory',
    ]);
    expect(
      await outcome(owner.api.fileDownloadTicketCreate({ path: at(), body: { path: '/link.txt' } })),
    ).toEqual([404, 'not-found']);
    const root = await owner.api.fileList({ path: at(), query: { path: '/' } });
    expect(root.entries.map((e) => e.name)).not.toContain('link.txt');
    await canaryIntact();
    // A write replaces the link itself.
    await owner.api.fileWrite({ path: at(), query: { path: '/link.txt' }, body: { content: 'mine' } });
    expect(await readFile(join(volume, 'link.txt'), 'utf8')).toBe('mine');
    await canaryIntact();
    // A recursive delete removes the link in the tree, never what it points at.
    await owner.api.fileDelete({ path: at(), query: { path: '/real', recursive: true } });
    await owner.api.fileDelete({ path: at(), query: { path: '/linkdir', recursive: true } });
    await canaryIntact();
    expect((await readdir(volume)).filter((n) => ['real', 'linkdir'].includes(n))).toEqual([]);
    await rm(join(volume, 'link.txt'));
  });
});
